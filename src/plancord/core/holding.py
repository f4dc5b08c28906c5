"""Holding what a call changed to the plan's current step: the host keeps the step.

``core.drift`` judged a call by the paths its arguments name, so a shell command or a commit
with a list of paths was never held to a step's ``files``. Here the judgement starts from the
paths the host *observed* changing (or, before a call runs, from its tool alone) and from
the step the host keeps as current, never from what the agent announced:

- the current step declares the tool and (when it names files) covers every changed path:
  the call is **within** it;
- otherwise the first later step that does **moves the plan on** to it; the steps passed
  over are skipped, and entering a 🔴 step means its checkpoint is answered first;
- otherwise the call is **drift**, with the paths outside the current step.

A call that changed nothing is judged by its tool alone. A tool that names no paths is no
longer in scope by default: the paths come from what it did. A call whose writes the host
knows before it runs (``KnownWrites``: a file tool's path, the paths given to a commit, the
ref a checkout switches to) is judged by them before it runs, so drift is asked before it
happens; what it then changes is observed as for any other call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plancord.core.drift import matches_files
from plancord.core.execution import StepIndex, step_number
from plancord.core.plan import Plan, PlanStep, Risk


@dataclass(frozen=True, slots=True)
class KnownWrites:
    """What a call will write, known from its arguments before it runs."""

    paths: tuple[str, ...] = ()
    """Workspace-relative paths (a directory stands for all it holds)."""
    switches_to: str | None = None
    """The ref a checkout moves ``HEAD`` to, or None."""
    new_branch: bool = False
    """The checkout creates the branch it switches to."""

    def covers(self, path: str) -> bool:
        """Whether ``path`` is one of ``paths`` or inside one of them."""
        return any(path == known or path.startswith(known + "/") for known in self.paths)

    def leaves(self, branch: str) -> bool:
        """Whether the call moves ``HEAD`` off ``branch``."""
        if self.switches_to is None:
            return False
        return self.new_branch or self.switches_to not in (branch, f"refs/heads/{branch}")


@dataclass(frozen=True, slots=True)
class WithinStep:
    """The call is the current step's work."""

    step: StepIndex


@dataclass(frozen=True, slots=True)
class MovesOn:
    """Only a later step covers the call: the plan moves on to ``step``.

    ``skipped`` are the steps passed over (to be recorded as skipped); ``checkpoint`` is true
    when ``step`` is 🔴, so its checkpoint must be answered before the call runs (or, after
    the fact, before its effect is kept).
    """

    step: StepIndex
    skipped: tuple[StepIndex, ...]
    checkpoint: bool


@dataclass(frozen=True, slots=True)
class StepDrift:
    """No step from the current one on covers the call. ``outside`` are the changed paths
    the current step does not cover (empty when the tool itself is what is outside)."""

    step: StepIndex
    outside: tuple[str, ...]
    reason: str


Holding = WithinStep | MovesOn | StepDrift


def hold_to_step(
    plan: Plan, current: StepIndex, tool: str, changed: Sequence[str] | None
) -> Holding:
    """Where a call of ``tool`` that changed ``changed`` stands against step ``current``.

    ``changed`` is None before the call runs (the tool alone is judged; the paths are judged
    again once observed) and the observed workspace-relative paths after it. Raises
    ValueError when ``current`` is not a step of ``plan``.
    """
    if not 0 <= current < len(plan.steps):
        raise ValueError(f"step {current} is not a step of a {len(plan.steps)}-step plan")
    paths = tuple(changed) if changed is not None else ()
    limits_tools = any(step.tools for step in plan.steps)
    if _covers(plan.steps[current], tool, paths, limits_tools):
        return WithinStep(current)
    for later in range(current + 1, len(plan.steps)):
        if _covers(plan.steps[later], tool, paths, limits_tools):
            return MovesOn(
                step=StepIndex(later),
                skipped=tuple(StepIndex(i) for i in range(current + 1, later)),
                checkpoint=plan.steps[later].risk is Risk.HIGH,
            )
    step = plan.steps[current]
    if limits_tools and tool not in step.tools:
        return StepDrift(current, paths, _tool_reason(plan, current, tool))
    outside = tuple(path for path in paths if not matches_files(step.files, path))
    shown = ", ".join(f"`{path}`" for path in outside[:3])
    more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
    return StepDrift(
        current,
        outside,
        f"{shown}{more} is not among the files step {step_number(current)} names, "
        "nor does a later step cover this call",
    )


def entering_checkpoint(plan: Plan, step: StepIndex) -> bool:
    """Whether starting ``step`` (the first step when execution starts) needs its 🔴
    checkpoint answered before any of its calls run."""
    return plan.steps[step].risk is Risk.HIGH


def _covers(step: PlanStep, tool: str, paths: Sequence[str], limits_tools: bool) -> bool:
    if limits_tools and tool not in step.tools:
        return False
    if not step.files:
        return True
    return all(matches_files(step.files, path) for path in paths)


def _tool_reason(plan: Plan, current: StepIndex, tool: str) -> str:
    earlier = [step_number(StepIndex(i)) for i in range(current) if tool in plan.steps[i].tools]
    if earlier:
        which = ", ".join(str(i) for i in earlier)
        return f"`{tool}` belongs to step {which}, which the plan has moved past"
    return f"no step from step {step_number(current)} on uses `{tool}`"
