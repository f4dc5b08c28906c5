"""The plan message's buttons and the modals they open.

Each button is a ``DynamicItem`` whose custom_id names only ``plan:<action>:<plan_id>:<rev>``;
a click reloads the revision from the store and hands the decision to ``PlanningService``,
which applies the one approver policy and the revision/sha binding. So buttons keep working
after a restart, and a click on an old or already decided plan is refused with the reason
rather than obeyed.

Every click is answered before the store is read: Discord fails an interaction whose first
answer comes after 3 s, and a busy store (SQLite's one writer, PostgreSQL under load) can
take longer. Approve defers; Edit and Reject open their form at once, from what the click
carries, and the form's submission is decided like any click (``PlanFormButton``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import discord

from plancord.core.planning import ApprovalMode, Phase, PlanEvent, PlanRef, PlanRevision
from plancord.core.review_gate import ReviewHeld
from plancord.discord_bot.shared.client import client_of
from plancord.discord_bot.shared.common import actor_at, explained_refusals, reply_error
from plancord.discord_bot.shared.dynamic_items import PLAN_ID, CustomId

if TYPE_CHECKING:
    from plancord.app import App

REVISION = "[1-9][0-9]{0,5}"
MODAL_TIMEOUT_SECONDS = 15 * 60
FEEDBACK_LIMIT = 2000
REASON_LIMIT = 1000

_APPROVE_ACTIONS = {
    ApprovalMode.NORMAL: "approve",
    ApprovalMode.FRESH_CONTEXT: "approve-fresh",
    ApprovalMode.CONFIRM_EACH_EDIT: "approve-confirm",
}
_APPROVE_MODES = {action: mode for mode, action in _APPROVE_ACTIONS.items()}
_APPROVE_LABELS = {
    ApprovalMode.NORMAL: "Approve",
    ApprovalMode.FRESH_CONTEXT: "Approve, fresh context",
    ApprovalMode.CONFIRM_EACH_EDIT: "Approve, confirm each edit",
}

Button = discord.ui.Button[discord.ui.View]

APPROVE_ID = CustomId(
    "plan:{action}:{plan_id}:{revision}",
    action="|".join(_APPROVE_MODES),
    plan_id=PLAN_ID,
    revision=REVISION,
)
ACKNOWLEDGE_ID = CustomId(
    "plan:ack:{action}:{plan_id}:{revision}:{blockers}",
    action="|".join(_APPROVE_MODES),
    plan_id=PLAN_ID,
    revision=REVISION,
    blockers="[1-9][0-9]?",
)


def app_of(interaction: discord.Interaction) -> App:
    return client_of(interaction).app


async def revision_for_click(
    interaction: discord.Interaction, plan_id: str, revision: int
) -> PlanRevision | None:
    """The revision a button names; else the click is told it no longer exists. Where the
    click came from is the authority's to judge, with the decision (``core.places``)."""
    found = await app_of(interaction).store.get_revision(plan_id, revision)
    if found is None:
        await reply_error(interaction, f"Plan v{revision} no longer exists.")
        return None
    return found


async def may_decide(
    interaction: discord.Interaction, revision: PlanRevision, event: PlanEvent
) -> bool:
    """Whether the clicker may decide ``event`` on ``revision`` now (it is still the one
    waiting and they are an approver); else the refusal is explained, and audited by the
    service, which decides both again when the decision is made."""
    ref = PlanRef(agent=revision.agent, plan_id=revision.plan_id, revision=revision.revision)
    async with explained_refusals(interaction):
        await app_of(interaction).planning.check_decision(ref, actor_at(interaction), event)
        return True
    return False


def confirmation(action: str, revision: PlanRevision) -> str:
    return {
        "approved": f"Approved plan v{revision.revision} ({revision.sha8}); "
        f"**{revision.agent}** is carrying it out.",
        "changes-requested": f"Sent plan v{revision.revision} back to **{revision.agent}** "
        "with your feedback.",
        "rejected": f"Rejected plan v{revision.revision}; nothing will be executed.",
    }[action]


async def approve(
    interaction: discord.Interaction,
    revision: PlanRevision,
    mode: ApprovalMode,
    *,
    acknowledged_blockers: int | None = None,
) -> None:
    """Approve ``revision`` for the clicker; when its review holds the approval back and a
    second click may release it, answer with that click (``AcknowledgeBlockersButton``)."""
    ref = revision.exact_ref
    async with explained_refusals(interaction):
        planning = app_of(interaction).planning
        try:
            state = await planning.approve(
                ref,
                actor_at(interaction),
                mode,
                acknowledged_blockers=acknowledged_blockers,
            )
        except ReviewHeld as held:
            if held.hold.acknowledgement is None:
                raise
            view = discord.ui.View(timeout=None)
            view.add_item(AcknowledgeBlockersButton(ref.plan_id, ref.revision, held.blockers, mode))
            await interaction.followup.send(
                f"{held} Read the review's findings on the plan message first.",
                view=view,
                ephemeral=True,
            )
            return
        if state.phase is Phase.SUBMITTED:
            names = await planning.approvals(ref)
            needed = (await app_of(interaction).settings.plan_mode_for(revision.agent)).approvals
            left = needed - len(names)
            text = (
                f"Your approval of plan v{revision.revision} is recorded: {len(names)} of "
                f"{needed} ({', '.join(names)}). It executes after {left} more approver"
                f"{'s' if left != 1 else ''}."
            )
            await interaction.followup.send(text, ephemeral=True)
            return
        await interaction.followup.send(confirmation("approved", revision), ephemeral=True)


async def request_changes(
    interaction: discord.Interaction, revision: PlanRevision, feedback: str, step: int | None
) -> None:
    ref = PlanRef(agent=revision.agent, plan_id=revision.plan_id, revision=revision.revision)
    async with explained_refusals(interaction):
        await app_of(interaction).planning.request_changes(
            ref, actor_at(interaction), feedback, step
        )
        await interaction.followup.send(confirmation("changes-requested", revision), ephemeral=True)


async def reject(
    interaction: discord.Interaction, revision: PlanRevision, reason: str | None
) -> None:
    ref = PlanRef(agent=revision.agent, plan_id=revision.plan_id, revision=revision.revision)
    async with explained_refusals(interaction):
        await app_of(interaction).planning.reject(ref, actor_at(interaction), reason)
        await interaction.followup.send(confirmation("rejected", revision), ephemeral=True)


class EditPlanModal(discord.ui.Modal):
    """What should change in the plan, and optionally which step; the agent then revises it.
    Built from the click alone (``click`` is what the button's custom id names); the service
    checks the step against the plan when the form is submitted."""

    def __init__(self, click: PlanClick) -> None:
        super().__init__(title=f"Edit plan v{click.revision}", timeout=MODAL_TIMEOUT_SECONDS)
        self.click = click
        self.feedback: discord.ui.TextInput[Self] = discord.ui.TextInput(
            custom_id="feedback",
            style=discord.TextStyle.paragraph,
            required=True,
            max_length=FEEDBACK_LIMIT,
            placeholder="What should the agent do differently?",
        )
        self.step: discord.ui.TextInput[Self] = discord.ui.TextInput(
            custom_id="step",
            required=False,
            max_length=3,
            placeholder="A step number, such as 2",
        )
        self.add_item(discord.ui.Label(text="What should change?", component=self.feedback))
        self.add_item(discord.ui.Label(text="Step number (optional)", component=self.step))

    async def on_submit(self, interaction: discord.Interaction) -> None:
        raw_step = self.step.value.strip()
        if raw_step and not raw_step.isdigit():
            await reply_error(
                interaction, f"The step must be a number such as 2, not {raw_step!r}."
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        if not await self.click.check(interaction):
            return
        step = int(raw_step) if raw_step else None
        await request_changes(interaction, self.click.checked, self.feedback.value, step)


class RejectPlanModal(discord.ui.Modal):
    """Reject the plan, with an optional reason the agent and the channel will see."""

    def __init__(self, click: PlanClick) -> None:
        super().__init__(title=f"Reject plan v{click.revision}", timeout=MODAL_TIMEOUT_SECONDS)
        self.click = click
        self.reason: discord.ui.TextInput[Self] = discord.ui.TextInput(
            custom_id="reason",
            style=discord.TextStyle.paragraph,
            required=False,
            max_length=REASON_LIMIT,
            placeholder="Why not? (optional)",
        )
        self.add_item(discord.ui.Label(text="Reason (optional)", component=self.reason))

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        if not await self.click.check(interaction):
            return
        await reject(interaction, self.click.checked, self.reason.value.strip() or None)


@dataclass(slots=True)
class PlanClick:
    """What a plan button's click acts on: the revision its custom id names, loaded by the
    check that the click came from the agent's own channel (the button's
    ``interaction_check``, or the submission of the form an Edit or Reject opened), then
    read by its callback. The check reads the store, so the click has been answered first."""

    plan_id: str
    revision: int
    found: PlanRevision | None = None

    async def check(self, interaction: discord.Interaction) -> bool:
        async with explained_refusals(interaction):
            self.found = await revision_for_click(interaction, self.plan_id, self.revision)
        return self.found is not None

    @property
    def checked(self) -> PlanRevision:
        """The revision ``check`` loaded; only after it passed."""
        if self.found is None:
            raise RuntimeError("the click was not checked")
        return self.found


class ApprovePlanButton(
    discord.ui.DynamicItem[Button],
    template=APPROVE_ID.template,
):
    def __init__(
        self,
        plan_id: str,
        revision: int,
        mode: ApprovalMode = ApprovalMode.NORMAL,
        *,
        disabled: bool = False,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=_APPROVE_LABELS[mode],
                style=discord.ButtonStyle.success
                if mode is ApprovalMode.NORMAL
                else discord.ButtonStyle.secondary,
                custom_id=APPROVE_ID(
                    action=_APPROVE_ACTIONS[mode], plan_id=plan_id, revision=revision
                ),
                disabled=disabled,
                row=0 if mode is ApprovalMode.NORMAL else 1,
            )
        )
        self.click = PlanClick(plan_id, revision)
        self.mode = mode

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(match["plan_id"], int(match["revision"]), _APPROVE_MODES[match["action"]])

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        """Acknowledge the click before the store is read: the answer, a confirmation or a
        refusal, is ephemeral either way, and Discord wants a response within 3 s."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        return await self.click.check(interaction)

    async def callback(self, interaction: discord.Interaction) -> Any:
        revision = self.click.found
        if revision is None:
            return
        await approve(interaction, revision, self.mode)


class AcknowledgeBlockersButton(
    discord.ui.DynamicItem[Button],
    template=ACKNOWLEDGE_ID.template,
):
    """The second click of an approval the review holds back (``plan_mode.review: mode:
    require_acknowledgement``): ``Approve despite 1 blocker``. Its custom_id carries the
    number of blockers confirmed, so it approves only while the review still has exactly
    that many; the approval's audit row records them."""

    def __init__(self, plan_id: str, revision: int, blockers: int, mode: ApprovalMode) -> None:
        super().__init__(
            discord.ui.Button(
                label=f"Approve despite {blockers} blocker{'s' if blockers != 1 else ''}",
                style=discord.ButtonStyle.danger,
                custom_id=ACKNOWLEDGE_ID(
                    action=_APPROVE_ACTIONS[mode],
                    plan_id=plan_id,
                    revision=revision,
                    blockers=blockers,
                ),
            )
        )
        self.click = PlanClick(plan_id, revision)
        self.blockers = blockers
        self.mode = mode

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        mode = _APPROVE_MODES[match["action"]]
        return cls(match["plan_id"], int(match["revision"]), int(match["blockers"]), mode)

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        await interaction.response.defer(ephemeral=True, thinking=True)
        return await self.click.check(interaction)

    async def callback(self, interaction: discord.Interaction) -> Any:
        revision = self.click.found
        if revision is None:
            return
        await approve(interaction, revision, self.mode, acknowledged_blockers=self.blockers)


_FORMS: dict[str, tuple[str, discord.ButtonStyle]] = {
    "edit": ("Edit", discord.ButtonStyle.primary),
    "reject": ("Reject", discord.ButtonStyle.danger),
}
FORM_ID = CustomId(
    "plan:{action}:{plan_id}:{revision}",
    action="|".join(_FORMS),
    plan_id=PLAN_ID,
    revision=REVISION,
)


class PlanFormButton(
    discord.ui.DynamicItem[Button],
    template=FORM_ID.template,
):
    """Edit and Reject: each opens its form at once, as the click's first answer.

    A form can only be a click's first answer, and anything the store says would come too
    late behind a busy store (Discord waits 3 s); so the form is built from what the click
    carries (the custom id's plan id and revision) and nothing is read before it opens. What
    a click was refused for before (a superseded or decided revision, another channel, a
    member the approver policy refuses) is decided when the form is submitted, through the
    same check and the same service call, and told then; a refusal is audited then, by the
    service. A form closed unsubmitted decides nothing and writes nothing."""

    def __init__(self, action: str, plan_id: str, revision: int, *, disabled: bool = False) -> None:
        label, style = _FORMS[action]
        super().__init__(
            discord.ui.Button(
                label=label,
                style=style,
                custom_id=FORM_ID(action=action, plan_id=plan_id, revision=revision),
                disabled=disabled,
                row=0,
            )
        )
        self.action = action
        self.click = PlanClick(plan_id, revision)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(match["action"], match["plan_id"], int(match["revision"]))

    async def callback(self, interaction: discord.Interaction) -> Any:
        form: discord.ui.Modal = (
            EditPlanModal(self.click) if self.action == "edit" else RejectPlanModal(self.click)
        )
        await interaction.response.send_modal(form)


PLAN_BUTTONS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    ApprovePlanButton,
    AcknowledgeBlockersButton,
    PlanFormButton,
)


def plan_buttons(plan_id: str, revision: int, *, disabled: bool = False) -> discord.ui.View:
    """Approve · Edit · Reject, then the two other ways to approve; all off once decided."""
    view = discord.ui.View(timeout=None)
    view.add_item(ApprovePlanButton(plan_id, revision, disabled=disabled))
    view.add_item(PlanFormButton("edit", plan_id, revision, disabled=disabled))
    view.add_item(PlanFormButton("reject", plan_id, revision, disabled=disabled))
    view.add_item(
        ApprovePlanButton(plan_id, revision, ApprovalMode.FRESH_CONTEXT, disabled=disabled)
    )
    view.add_item(
        ApprovePlanButton(plan_id, revision, ApprovalMode.CONFIRM_EACH_EDIT, disabled=disabled)
    )
    return view
