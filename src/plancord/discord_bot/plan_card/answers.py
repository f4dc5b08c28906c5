"""A pick in a plan question's menu: acknowledged at once, then checked against the shared
state (the authority lets the member answer the agent's questions, the revision is still
the one waiting, the choice is one the question offers), kept with its audit row, and shown
on the plan message. A pick that fails a check changes nothing and is answered privately
with the reason."""

from __future__ import annotations

import logging

import discord

from plancord.core.authority import Act, Refusal, Subject
from plancord.core.errors import PlancordError
from plancord.core.plan_answers import AnswerOutcome, PlanAnswer, pick_refusal
from plancord.core.planning import Phase
from plancord.discord_bot.plan_card.buttons import revision_for_click
from plancord.discord_bot.plan_card.message import PlanCards
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import acknowledge, actor_at, reply_error

log = logging.getLogger(__name__)


class PlanAnswering:
    """Takes the picks in the menus of a waiting plan's questions and shows them on its card."""

    def __init__(self, bot: PlancordClient, cards: PlanCards) -> None:
        self.bot = bot
        self.cards = cards

    async def answer(
        self,
        interaction: discord.Interaction,
        plan_id: str,
        number: int,
        question: int,
        choice: int,
    ) -> None:
        await acknowledge(interaction)
        revision = await revision_for_click(interaction, plan_id, number)
        if revision is None:
            return
        app = self.bot.app
        actor = actor_at(interaction)
        detail = {"plan_id": plan_id, "revision": number, "question": question}
        verdict = await app.asks.judge(
            actor, Subject.QUESTION, Act.ANSWER, revision.agent, None, detail
        )
        if isinstance(verdict, Refusal):
            await reply_error(interaction, verdict.text)
            return
        try:
            state = (await app.planning.status(revision.agent)).state
        except PlancordError as exc:
            await reply_error(interaction, str(exc))
            return
        waiting = (
            state.phase is Phase.SUBMITTED and state.plan_id == plan_id and state.revision == number
        )
        if not waiting:
            await reply_error(
                interaction,
                f"Plan v{number} is no longer waiting for a decision, so its questions are closed.",
            )
            return
        choices = revision.plan.choices_for(question)
        if not 0 <= choice < len(choices):
            await reply_error(interaction, "That is not one of this question's choices.")
            return
        answer = PlanAnswer(
            plan_id=plan_id,
            revision=number,
            question=question,
            answer=choices[choice],
            by=actor.label,
            by_name=actor.name,
            at=app.clock.now(),
        )
        try:
            kept = await app.plan_answers.record(
                answer, revision.agent, revision.plan.questions[question]
            )
        except PlancordError as exc:
            await reply_error(interaction, f"Your answer was not kept: {exc}")
            return
        if kept is not AnswerOutcome.KEPT:  # decided or voted on since the check above
            await reply_error(interaction, pick_refusal(kept, number))
            return
        message = await self.cards.store.get(plan_id, number)
        if message is not None and not await self.cards.redraw(message, revision=revision):
            log.warning("the answer to Q%s of plan v%s is kept but not shown", question, number)

    async def redraw(self, plan_id: str, number: int) -> None:
        """Draw the message of plan ``number`` again (a comment arrived, or was resolved)."""
        message = await self.cards.store.get(plan_id, number)
        if message is not None:
            await self.cards.redraw(message)
