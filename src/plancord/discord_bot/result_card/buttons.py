"""The completion card's controls: Merge, Discard, Push and the Roll back… menu.

Each is a ``DynamicItem`` whose custom_id names only ``result:<action>:<plan_id>:<version>``;
a click reloads the result from the store and hands the decision to the runtime's
``ExecutionResults``, which checks the version (an older card's click is refused), applies
the plan's approver policy and audits the outcome. So the controls work after a restart,
and a stale, double or unauthorised click gets an ephemeral answer and changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Self

import discord

from plancord.core.errors import PlancordError
from plancord.core.execution import StepNumber
from plancord.core.results import ResultAction, StepResult
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.common import actor_from, agent_for, reply_error

PLAN_ID = r"(?P<plan_id>[0-9a-f]{1,32})"
VERSION = r"(?P<version>[1-9][0-9]{0,8})"
MENU_LIMIT = 25

Button = discord.ui.Button[discord.ui.View]
_BUTTONS = {
    ResultAction.MERGE: ("merge", "Merge", discord.ButtonStyle.success),
    ResultAction.DISCARD: ("discard", "Discard", discord.ButtonStyle.danger),
    ResultAction.PUSH: ("push", "Push", discord.ButtonStyle.secondary),
}
"""Each button's action: the word its custom_id carries (as cards already posted carry it),
its label and its style."""
_BY_WORD = {word: action for action, (word, _, _) in _BUTTONS.items()}


async def _act(
    interaction: discord.Interaction,
    action: ResultAction,
    plan_id: str,
    version: int,
    before: StepNumber | None = None,
) -> None:
    """Check the click came from the result's own channel, then decide; the answer (or
    the refusal) is ephemeral."""
    app = client_of(interaction).app
    record = await app.results.with_result(plan_id)
    agent = await agent_for(app, interaction.channel)
    if record is None or agent is None or agent.name != record.agent:
        await reply_error(interaction, "This completion card belongs to another channel.")
        return
    actor = actor_from(interaction.user)
    results = app.results
    try:
        if action is ResultAction.MERGE:
            text = await results.merge(plan_id, version, actor)
        elif action is ResultAction.DISCARD:
            text = await results.discard(plan_id, version, actor)
        elif action is ResultAction.PUSH:
            text = await results.push(plan_id, version, actor)
        elif action is ResultAction.ROLL_BACK and before is not None:
            text = await results.roll_back(plan_id, version, before, actor)
        else:
            raise ValueError(f"a completion card offers no {action.value!r} with {before!r}")
    except PlancordError as exc:
        await reply_error(interaction, str(exc))
        return
    await interaction.followup.send(text, ephemeral=True)


class ResultButton(
    discord.ui.DynamicItem[Button],
    template=r"result:(?P<action>merge|discard|push):" + PLAN_ID + ":" + VERSION,
):
    def __init__(
        self, action: ResultAction, plan_id: str, version: int, *, disabled: bool = False
    ) -> None:
        word, label, style = _BUTTONS[action]
        super().__init__(
            discord.ui.Button(
                label=label,
                style=style,
                custom_id=f"result:{word}:{plan_id}:{version}",
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
        await _act(interaction, self.action, self.plan_id, self.version)


class RollBackSelect(
    discord.ui.DynamicItem[discord.ui.Select[discord.ui.View]],
    template=r"result:rollback:" + PLAN_ID + ":" + VERSION,
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
                custom_id=f"result:rollback:{plan_id}:{version}",
                placeholder="Roll back…",
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
        values = self.item.values
        step = int(values[0]) if values and values[0].isdigit() else 0
        if step < 1:
            await reply_error(interaction, "Pick a step to roll back to before.")
            return
        await _act(
            interaction, ResultAction.ROLL_BACK, self.plan_id, self.version, StepNumber(step)
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
