"""A pick in a plan question's menu, decided by the core: the authority lets the member
answer the agent's questions (place first), the revision is still the one waiting, the
choice is one the question offers, and the pick is kept with its audit row in one
transaction (``core.plan_answers``: frozen by the first approval vote).

Why this exists: a front end reports the pick and shows the outcome; it does not judge it,
read the state or write the audit log, so a second front end refuses the same picks the
same way.
"""

from __future__ import annotations

from typing import Protocol

from plancord.core.ask_authority import AskAuthority
from plancord.core.authority import Act, Refusal, Subject
from plancord.core.errors import PlancordError
from plancord.core.plan_answers import AnswerOutcome, PlanAnswer, pick_refusal
from plancord.core.planning import Actor, Phase, PlanningState, PlanRevision
from plancord.core.ports import Clock


class PickStates(Protocol):
    async def load_state(self, agent: str) -> PlanningState: ...


class PickRecords(Protocol):
    async def record(self, answer: PlanAnswer, agent: str, question: str) -> AnswerOutcome:
        """Keep the pick and its audit row together, or say why not."""
        ...


class PlanPicks:
    """Judges and keeps a reviewer's pick for a plan question."""

    def __init__(
        self, authority: AskAuthority, states: PickStates, answers: PickRecords, clock: Clock
    ) -> None:
        self._authority = authority
        self._states = states
        self._answers = answers
        self._clock = clock

    async def pick(
        self, actor: Actor, revision: PlanRevision, question: int, choice: int
    ) -> PlanAnswer | str:
        """``actor`` picks choice ``choice`` of question ``question`` (both 0-based) of
        ``revision``: the kept answer, or why nothing was kept (a refusal is audited)."""
        plan_id, number = revision.plan_id, revision.revision
        detail = {"plan_id": plan_id, "revision": number, "question": question}
        verdict = await self._authority.judge(
            actor, Subject.QUESTION, Act.ANSWER, revision.agent, None, detail
        )
        if isinstance(verdict, Refusal):
            return verdict.text
        try:
            state = await self._states.load_state(revision.agent)
        except PlancordError as exc:
            return str(exc)
        waiting = (
            state.phase is Phase.SUBMITTED and state.plan_id == plan_id and state.revision == number
        )
        if not waiting:
            return (
                f"Plan v{number} is no longer waiting for a decision, so its questions are closed."
            )
        choices = revision.plan.choices_for(question)
        if not 0 <= choice < len(choices):
            return "That is not one of this question's choices."
        answer = PlanAnswer(
            plan_id=plan_id,
            revision=number,
            question=question,
            answer=choices[choice],
            by=actor.label,
            by_name=actor.name,
            at=self._clock.now(),
        )
        try:
            kept = await self._answers.record(
                answer, revision.agent, revision.plan.questions[question]
            )
        except PlancordError as exc:
            return f"Your answer was not kept: {exc}"
        if kept is not AnswerOutcome.KEPT:  # decided or voted on since the check above
            return pick_refusal(kept, number)
        return answer
