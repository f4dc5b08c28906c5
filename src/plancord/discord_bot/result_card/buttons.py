"""The completion card's controls: Merge, Discard, Push and the Roll back… menu.

Each is a ``DynamicItem`` whose custom_id names only ``result:<action>:<plan_id>:<version>``;
a click reloads the result from the store and hands the decision to the runtime's
``ExecutionResults``, which checks the version (an older card's click is refused), applies
the plan's approver policy and audits the outcome. So the controls work after a restart,
and a stale, double or unauthorised click gets an ephemeral answer and changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Self

import discord

from plancord.agent.execution.results import ExecutionResults
from plancord.core.execution import StepNumber
from plancord.core.planning import Actor
from plancord.core.results import ResultAction, StepResult
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.common import actor_at, explained_refusals, reply_error
from plancord.discord_bot.shared.controls import picked_choice
from plancord.discord_bot.shared.dynamic_items import PLAN_ID, CustomId
from plancord.discord_bot.shared.embed_basics import jump_url

VERSION = "[1-9][0-9]{0,8}"
MENU_LIMIT = 25

Button = discord.ui.Button[discord.ui.View]
Decide = Callable[[ExecutionResults, Actor], Awaitable[str]]
"""A decision on the result, given who decided: the answer for them."""


@dataclass(frozen=True, slots=True)
class ResultButtonKind:
    """One button of the card: the word its custom_id carries (as cards already posted carry
    it), its style, and the decision it asks ``ExecutionResults`` for; its label is the
    action's own (``ResultAction.label``)."""

    word: str
    style: discord.ButtonStyle
    decide: Callable[[ExecutionResults, str, int, Actor], Awaitable[str]]


_BUTTONS = {
    ResultAction.MERGE: ResultButtonKind(
        "merge", discord.ButtonStyle.success, ExecutionResults.merge
    ),
    ResultAction.DISCARD: ResultButtonKind(
        "discard", discord.ButtonStyle.danger, ExecutionResults.discard
    ),
    ResultAction.PUSH: ResultButtonKind(
        "push", discord.ButtonStyle.secondary, ExecutionResults.push
    ),
}
_BY_WORD = {kind.word: action for action, kind in _BUTTONS.items()}
BUTTON_ID = CustomId(
    "result:{action}:{plan_id}:{version}",
    action="|".join(_BY_WORD),
    plan_id=PLAN_ID,
    version=VERSION,
)
ROLL_BACK_ID = CustomId("result:rollback:{plan_id}:{version}", plan_id=PLAN_ID, version=VERSION)


async def _act(interaction: discord.Interaction, plan_id: str, decide: Decide) -> None:
    """Decide (where the click came from is the authority's to judge, with the decision:
    ``core.places``); the answer (or the refusal) is ephemeral."""
    app = client_of(interaction).app
    record = await app.results.with_result(plan_id)
    if record is None:
        await reply_error(interaction, "This completion card names no result plancord knows.")
        return
    clicked, recorded = interaction.message, record.card_message
    if (
        recorded is not None
        and clicked is not None
        and clicked.id != recorded
        and clicked.channel.id == record.card_channel
        and interaction.client.user is not None
        and clicked.author.id == interaction.client.user.id
    ):
        # A second copy of the card in the agent's channel (posted again after a process
        # died before recording the first): only the recorded card decides; this one is
        # closed. A message anywhere else is left to the authority's refusal by place.
        await clicked.edit(view=None)
        where = jump_url(interaction.guild_id, clicked.channel.id, recorded)
        await reply_error(
            interaction, f"This copy of the completion card is not the one in use: {where}"
        )
        return
    results = app.results
    async with explained_refusals(interaction):
        text = await decide(results, actor_at(interaction))
        await interaction.followup.send(text, ephemeral=True)


class ResultButton(
    discord.ui.DynamicItem[Button],
    template=BUTTON_ID.template,
):
    def __init__(
        self, action: ResultAction, plan_id: str, version: int, *, disabled: bool = False
    ) -> None:
        kind = _BUTTONS[action]
        super().__init__(
            discord.ui.Button(
                label=action.label,
                style=kind.style,
                custom_id=BUTTON_ID(action=kind.word, plan_id=plan_id, version=version),
                disabled=disabled,
                row=0,
            )
        )
        self.action = action
        self.plan_id = plan_id
        self.version = version

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(_BY_WORD[match["action"]], match["plan_id"], int(match["version"]))

    async def callback(self, interaction: discord.Interaction) -> Any:
        await interaction.response.defer(ephemeral=True, thinking=True)
        decide = _BUTTONS[self.action].decide
        await _act(
            interaction,
            self.plan_id,
            lambda results, actor: decide(results, self.plan_id, self.version, actor),
        )


class RollBackSelect(
    discord.ui.DynamicItem[discord.ui.Select[discord.ui.View]],
    template=ROLL_BACK_ID.template,
):
    """Roll back… to before one of the steps that has a commit on the branch."""

    def __init__(
        self,
        plan_id: str,
        version: int,
        steps: Sequence[StepResult] = (),
        *,
        disabled: bool = False,
    ) -> None:
        options = [
            discord.SelectOption(
                label=f"Before step {step.number}"[:100],
                description=(step.title or "step")[:100],
                value=str(step.number),
            )
            for step in steps
            if step.committed
        ][-MENU_LIMIT:] or [discord.SelectOption(label="Nothing to roll back", value="0")]
        super().__init__(
            discord.ui.Select(
                custom_id=ROLL_BACK_ID(plan_id=plan_id, version=version),
                placeholder=f"{ResultAction.ROLL_BACK.label}…",
                options=options,
                disabled=disabled or options[0].value == "0",
                row=1,
            )
        )
        self.plan_id = plan_id
        self.version = version

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(match["plan_id"], int(match["version"]))

    async def callback(self, interaction: discord.Interaction) -> Any:
        await interaction.response.defer(ephemeral=True, thinking=True)
        step = picked_choice(self.item)
        if step < 1:
            await reply_error(interaction, "Pick a step to roll back to before.")
            return
        await _act(
            interaction,
            self.plan_id,
            lambda results, actor: results.roll_back(
                self.plan_id, self.version, StepNumber(step), actor
            ),
        )


RESULT_CONTROLS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (ResultButton, RollBackSelect)


def result_view(
    plan_id: str,
    version: int,
    steps: Sequence[StepResult],
    *,
    waiting: bool,
    can_push: bool,
) -> discord.ui.View:
    """Merge · Discard (· Push), then the Roll back… menu; all off once decided."""
    view = discord.ui.View(timeout=None)
    off = not waiting
    view.add_item(ResultButton(ResultAction.MERGE, plan_id, version, disabled=off))
    view.add_item(ResultButton(ResultAction.DISCARD, plan_id, version, disabled=off))
    if can_push:
        view.add_item(ResultButton(ResultAction.PUSH, plan_id, version, disabled=off))
    view.add_item(RollBackSelect(plan_id, version, steps, disabled=off))
    return view
