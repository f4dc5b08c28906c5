"""A member's direct edit of a plan, one change at a time: a step's fields replaced, a step
added, removed or moved, the title and context notes changed. Each change yields the whole
plan again as model input, so it goes through ``validate_plan`` and its limits like any
submission; a problem comes back as one line naming the field as the member's form names
it (``Step 3 files: …``).

The form's text is read here once: lists one item a line (tools and hosts may also be
separated by commas), the risk as low, medium or high."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from plancord.core.errors import PlanValidationError
from plancord.core.plan import Plan, PlanStep, Risk


@dataclass(frozen=True, slots=True)
class StepForm:
    """A step as the member typed it: the form's fields, unparsed."""

    description: str
    files: str | None = ""
    risk: str = "low"
    tools: str | None = ""
    network: str | None = ""
    """A list given as None is kept as the step has it (the form left it out: its text is
    longer than one of Discord's text inputs takes)."""

    @classmethod
    def of(cls, plan: Plan, number: int) -> StepForm:
        """Step ``number`` (1-based) of ``plan`` as the form shows it to be edited."""
        step = plan.steps[number - 1]
        return cls(
            description=step.description,
            files="\n".join(step.files),
            risk=step.risk.value,
            tools="\n".join(step.tools),
            network="\n".join(step.network),
        )

    def step(self, where: str, current: PlanStep | None = None) -> dict[str, Any]:
        """The step as model input (a list the form left out as ``current`` has it); a risk
        other than low, medium or high is refused here, naming ``where`` (``Step 2``)."""
        risk = self.risk.strip().lower() or Risk.LOW.value
        if risk not in {r.value for r in Risk}:
            raise PlanValidationError([f"{where} risk: must be low, medium or high, not {risk!r}"])
        data: dict[str, Any] = {"description": self.description, "risk": risk}
        for name, text, commas in (
            ("files", self.files, False),
            ("tools", self.tools, True),
            ("network", self.network, True),
        ):
            if text is None:
                data[name] = list(getattr(current, name)) if current is not None else []
            else:
                data[name] = _items(text, commas=commas)
        return data


def _items(text: str, *, commas: bool) -> list[str]:
    parts = re.split(r"[\n,]" if commas else r"\n", text)
    return [part.strip() for part in parts if part.strip()]


def _dump(plan: Plan) -> dict[str, Any]:
    data = plan.model_dump(mode="json")
    if data["question_choices"]:
        data["questions"] = [
            {"question": q, "choices": list(c)} if c else q
            for q, c in zip(data["questions"], data["question_choices"], strict=False)
        ]
    data.pop("question_choices")
    return data


def _check_number(plan: Plan, number: int, what: str = "Step") -> None:
    if not 1 <= number <= len(plan.steps):
        raise PlanValidationError(
            [f"{what}: the plan has steps 1 to {len(plan.steps)}; there is no step {number}"]
        )


def replace_step(plan: Plan, number: int, form: StepForm) -> dict[str, Any]:
    """``plan`` with step ``number`` (1-based) as ``form`` says."""
    _check_number(plan, number)
    data = _dump(plan)
    data["steps"][number - 1] = form.step(f"Step {number}", plan.steps[number - 1])
    return data


def add_step(plan: Plan, form: StepForm, at: int | None = None) -> dict[str, Any]:
    """``plan`` with a new step at position ``at`` (1-based; None: at the end)."""
    data = _dump(plan)
    position = len(plan.steps) + 1 if at is None else at
    if not 1 <= position <= len(plan.steps) + 1:
        raise PlanValidationError(
            [f"Position: give a number from 1 to {len(plan.steps) + 1}, not {position}"]
        )
    data["steps"].insert(position - 1, form.step(f"Step {position}"))
    return data


def remove_step(plan: Plan, number: int) -> dict[str, Any]:
    _check_number(plan, number)
    data = _dump(plan)
    del data["steps"][number - 1]
    return data


def move_step(plan: Plan, number: int, to: int) -> dict[str, Any]:
    """``plan`` with step ``number`` moved to position ``to`` (both 1-based)."""
    _check_number(plan, number)
    _check_number(plan, to, "New position")
    data = _dump(plan)
    step = data["steps"].pop(number - 1)
    data["steps"].insert(to - 1, step)
    return data


def retitle(plan: Plan, summary: str, context_notes: str) -> dict[str, Any]:
    data = _dump(plan)
    data["summary"] = summary
    data["context_notes"] = context_notes
    return data


_STEP_LOCATION = re.compile(r"^steps\[(\d+)\]\.?([a-z_]*)(?:\[\d+\])?: ")
_PLAN_FIELDS = {"summary": "Title", "context_notes": "Context notes", "steps": "Steps"}


def form_problem(error: PlanValidationError) -> str:
    """The first problem of ``error`` as one line naming the field as the form does
    (``steps[2].files[0]: …`` reads ``Step 3 files: …``), with how many more there are."""
    problems = list(error.problems) or [str(error)]
    first = problems[0]
    match = _STEP_LOCATION.match(first)
    if match is not None:
        field = match[2] or "description"
        first = f"Step {int(match[1]) + 1} {field}: " + first[match.end() :]
    else:
        head, colon, rest = first.partition(": ")
        if colon and head in _PLAN_FIELDS:
            first = f"{_PLAN_FIELDS[head]}: {rest}"
    more = len(problems) - 1
    return first + (f" (and {more} more)" if more else "")
