"""Who hears a committed planning change, and in which order: stated once.

Why this exists: the planning service tells its listeners one after another, and some read
what an earlier one wrote (the results read the execution record the step keeper ends). The
order used to follow from which part registered itself first in which constructor; here it
is one value, with the reason for each place, registered in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.steps import StepKeeper
from plancord.agent.plan_events import PlanEvents
from plancord.agent.plan_review.runs import PlanReviewRuns
from plancord.core.ports import PlanningListener
from plancord.core.service import PlanningService


@dataclass(frozen=True, slots=True)
class PlanLifecycle:
    """Who is told of each committed planning change, and in which order.

    The planning service tells its listeners one after another, each awaited before the
    next, so a listener reads what the ones before it wrote. The order is stated here, once,
    and registered in one call (``listen``); it does not follow from which part happened to
    be built first. A front end without a runtime (the operator's shell) leaves out the
    parts it does not run.
    """

    steps: StepKeeper
    results: ExecutionResults
    front_end: PlanningListener | None = None
    reviews: PlanReviewRuns | None = None
    turns: PlanEvents | None = None

    def in_order(self) -> tuple[PlanningListener, ...]:
        ordered = (
            # The front end first: the plan message and the channel's line show the change
            # before anything the change causes refers to them (the review shown on the
            # posted message, the completion card, the agent's next words).
            self.front_end,
            # The plan review starts on a submission, which no later listener acts on: its
            # place only starts the reviewer's call as early as it can.
            self.reviews,
            # The step keeper ends the execution record plan mode no longer holds (a
            # completion, a cancel, a Stop, a spent budget, an amendment refused).
            self.steps,
            # After the step keeper: the result opens from the ended record it reads; before
            # it the record still runs and no result (nor its card) opens until a restart.
            self.results,
            # The agent hears last. No listener above reads what this one writes, so its
            # place is a choice rather than a dependency: a turn it resumes starts once the
            # records are settled and the channel shows why.
            self.turns,
        )
        return tuple(listener for listener in ordered if listener is not None)

    def listen(self, planning: PlanningService) -> None:
        planning.listen(self.in_order())
