"""Editing a waiting plan directly from its message: ``Edit directly`` answers privately with
a step picker (a menu of up to 25 steps per row, and a menu of the plan-wide changes); a
pick opens a form with that step's fields, or the title and context notes, or a step to
add, remove or move. The form's submission is the edit: the service makes it revision n+1,
authored by the member, through the plan's own validation and limits.

The picker and its forms name the revision they were opened on, with its sha: an edit of a
revision that changed meanwhile is refused, never applied to other text. A mistake is one
line naming the field, and a ``Fix it`` button opens the form again holding what the
member typed, so nothing is lost."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Self

import discord

from plancord.core.errors import PlanValidationError
from plancord.core.plan import (
    MAX_CONTEXT_NOTES_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_SUMMARY_CHARS,
    Plan,
    Risk,
)
from plancord.core.plan_edits import (
    StepForm,
    add_step,
    form_problem,
    move_step,
    remove_step,
    replace_step,
    retitle,
)
from plancord.core.planning import PlanEvent, PlanRevision
from plancord.discord_bot.plan_card.buttons import (
    MODAL_TIMEOUT_SECONDS,
    REVISION,
    PlanClick,
    app_of,
    may_decide,
)
from plancord.discord_bot.shared.common import actor_at, explained_refusals
from plancord.discord_bot.shared.dynamic_items import PLAN_ID, CustomId
from plancord.discord_bot.shared.embed_basics import clip

TEXT_INPUT_LIMIT = 4000
"""Discord's most characters in one text input (and in its default value)."""
OPTIONS_PER_MENU = 25
LABEL_LIMIT = 45
OPTION_LABEL_LIMIT = 100
DIRECT_ID = CustomId("plan:direct:{plan_id}:{revision}", plan_id=PLAN_ID, revision=REVISION)
_PLAN_WIDE = (
    ("title", "Title and context notes"),
    ("add", "Add a step"),
    ("arrange", "Remove or move a step"),
)

Build = Callable[[Plan], dict[str, Any]]
"""The edited plan as model input, from the plan the form was opened on."""


class DirectEditButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=DIRECT_ID.template,
):
    """``Edit directly``: the step picker, to the member alone, once the service says they
    may change this revision (it is still the one waiting; they may send it back)."""

    def __init__(self, plan_id: str, revision: int, *, disabled: bool = False) -> None:
        super().__init__(
            discord.ui.Button(
                label="Edit directly",
                style=discord.ButtonStyle.secondary,
                custom_id=DIRECT_ID(plan_id=plan_id, revision=revision),
                disabled=disabled,
                row=1,
            )
        )
        self.click = PlanClick(plan_id, revision)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(match["plan_id"], int(match["revision"]))

    async def callback(self, interaction: discord.Interaction) -> Any:
        await interaction.response.defer(ephemeral=True, thinking=True)
        if not await self.click.check(interaction):
            return
        revision = self.click.checked
        if not await may_decide(interaction, revision, PlanEvent.REVISE):
            return
        await interaction.followup.send(
            picker_text(revision), view=StepPicker(revision), ephemeral=True
        )


def picker_text(revision: PlanRevision) -> str:
    return (
        f"Edit plan v{revision.revision} ({revision.sha8}) yourself: pick a step to change, "
        "or a change to the whole plan. Your edit becomes the next revision, which waits for "
        "approval again."
    )


class StepPicker(discord.ui.View):
    """The private picker: the steps, 25 to a menu, then the plan-wide changes."""

    def __init__(self, revision: PlanRevision) -> None:
        super().__init__(timeout=MODAL_TIMEOUT_SECONDS)
        self.revision = revision
        steps = revision.plan.steps
        for row, start in enumerate(range(0, len(steps), OPTIONS_PER_MENU)):
            options = [
                discord.SelectOption(
                    label=clip(f"{n}. {steps[n - 1].description}", OPTION_LABEL_LIMIT),
                    value=str(n),
                    description=f"{steps[n - 1].risk.value} risk",
                )
                for n in range(start + 1, min(start + OPTIONS_PER_MENU, len(steps)) + 1)
            ]
            last = start + len(options)
            menu: discord.ui.Select[StepPicker] = discord.ui.Select(
                custom_id=f"plan:pick-step:{start}",
                placeholder=f"Edit step {start + 1}…{last}",
                options=options,
                row=row,
            )
            menu.callback = self._step_picked(menu)  # type: ignore[method-assign]
            self.add_item(menu)
        wide: discord.ui.Select[StepPicker] = discord.ui.Select(
            custom_id="plan:pick-wide",
            placeholder="Change the whole plan…",
            options=[discord.SelectOption(label=label, value=key) for key, label in _PLAN_WIDE],
            row=len(self.children),
        )
        wide.callback = self._wide_picked(wide)  # type: ignore[method-assign]
        self.add_item(wide)

    def _step_picked(self, menu: discord.ui.Select[StepPicker]) -> Callable[..., Any]:
        async def picked(interaction: discord.Interaction) -> None:
            number = int(menu.values[0])
            form = StepForm.of(self.revision.plan, number)
            await interaction.response.send_modal(StepModal(self.revision, form, number))

        return picked

    def _wide_picked(self, menu: discord.ui.Select[StepPicker]) -> Callable[..., Any]:
        async def picked(interaction: discord.Interaction) -> None:
            choice = menu.values[0]
            plan = self.revision.plan
            modal: discord.ui.Modal
            if choice == "title":
                modal = TitleModal(self.revision, plan.summary, plan.context_notes)
            elif choice == "add":
                modal = StepModal(self.revision, StepForm(""), None)
            else:
                modal = ArrangeModal(self.revision)
            await interaction.response.send_modal(modal)

        return picked


def _text(
    custom_id: str,
    default: str,
    *,
    limit: int,
    paragraph: bool = True,
    required: bool = False,
    placeholder: str | None = None,
) -> discord.ui.TextInput[Any]:
    return discord.ui.TextInput(
        custom_id=custom_id,
        style=discord.TextStyle.paragraph if paragraph else discord.TextStyle.short,
        default=default or None,
        required=required,
        max_length=limit,
        placeholder=placeholder,
    )


async def submit_edit(
    interaction: discord.Interaction,
    revision: PlanRevision,
    build: Callable[[], Build],
    again: Callable[[], discord.ui.Modal],
) -> None:
    """A form's submission as a direct edit of ``revision``: ``build`` makes the edited plan
    from the form; a mistake is answered with one line and a ``Fix it`` button that opens
    the form again as the member left it (``again``)."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    ref = revision.exact_ref
    async with explained_refusals(interaction):
        try:
            data = build()(revision.plan)
            edited = await app_of(interaction).planning.edit(ref, data, actor_at(interaction))
        except PlanValidationError as exc:
            await interaction.followup.send(
                f"❌ {form_problem(exc)}. Nothing changed; **Fix it** opens the form "
                "again with your text.",
                view=FixIt(again()),
                ephemeral=True,
            )
            return
        await interaction.followup.send(
            f"Edited plan v{revision.revision} into v{edited.revision} ({edited.sha8}); "
            "it waits for approval again.",
            ephemeral=True,
        )


def _form_title(title: str) -> dict[str, Any]:
    """What each edit form gives ``discord.ui.Modal``: its title, clipped, and its timeout."""
    return {"title": clip(title, LABEL_LIMIT), "timeout": MODAL_TIMEOUT_SECONDS}


class FixIt(discord.ui.View):
    """``Fix it``: the form again, as the member left it."""

    def __init__(self, form: discord.ui.Modal) -> None:
        super().__init__(timeout=MODAL_TIMEOUT_SECONDS)
        self.form = form

    @discord.ui.button(label="Fix it", style=discord.ButtonStyle.primary, custom_id="plan:fix-it")
    async def fix(self, interaction: discord.Interaction, button: discord.ui.Button[Self]) -> None:
        await interaction.response.send_modal(self.form)


def _list_input(
    custom_id: str, text: str | None, placeholder: str
) -> discord.ui.TextInput[Any] | None:
    """A list's input, or None when its text is longer than one input takes (it is kept
    as it is; ``/plan edit`` with the plan's file edits it)."""
    if text is not None and len(text) > TEXT_INPUT_LIMIT:
        return None
    return _text(custom_id, text or "", limit=TEXT_INPUT_LIMIT, placeholder=placeholder)


class StepModal(discord.ui.Modal):
    """One step's fields (``number`` None: a step to add at the end): its description,
    files, risk, tools and network hosts, five inputs, Discord's most."""

    def __init__(self, revision: PlanRevision, form: StepForm, number: int | None) -> None:
        what = f"Step {number}" if number is not None else "New step"
        super().__init__(**_form_title(f"{what} of plan v{revision.revision}"))
        self.revision = revision
        self.number = number
        self.description = _text(
            "description", form.description, limit=MAX_DESCRIPTION_CHARS, required=True
        )
        self.add_item(discord.ui.Label(text="Description", component=self.description))
        self.files = _list_input("files", form.files, "One path or glob a line")
        if self.files is not None:
            self.add_item(discord.ui.Label(text="Files", component=self.files))
        self.risk: discord.ui.Select[Self] = discord.ui.Select(
            custom_id="risk",
            options=[
                discord.SelectOption(label=r.value, value=r.value, default=r.value == form.risk)
                for r in Risk
            ],
        )
        self.kept_risk = form.risk
        self.add_item(discord.ui.Label(text="Risk", component=self.risk))
        self.tools = _list_input("tools", form.tools, "One tool a line, such as str_replace")
        if self.tools is not None:
            self.add_item(discord.ui.Label(text="Tools", component=self.tools))
        self.network = _list_input("network", form.network, "One host a line, such as pypi.org")
        if self.network is not None:
            self.add_item(discord.ui.Label(text="Network hosts", component=self.network))

    def form(self) -> StepForm:
        def value(item: discord.ui.TextInput[Any] | None) -> str | None:
            return item.value if item is not None else None

        risk = self.risk.values[0] if self.risk.values else self.kept_risk
        return StepForm(
            description=self.description.value,
            files=value(self.files),
            risk=risk,
            tools=value(self.tools),
            network=value(self.network),
        )

    def build(self) -> Build:
        form, number = self.form(), self.number
        if number is None:
            return lambda plan: add_step(plan, form)
        return lambda plan: replace_step(plan, number, form)

    def again(self) -> discord.ui.Modal:
        return StepModal(self.revision, self.form(), self.number)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await submit_edit(interaction, self.revision, self.build, self.again)


class TitleModal(discord.ui.Modal):
    def __init__(self, revision: PlanRevision, summary: str, notes: str) -> None:
        super().__init__(**_form_title(f"Title of plan v{revision.revision}"))
        self.revision = revision
        self.summary = _text(
            "summary", summary, limit=MAX_SUMMARY_CHARS, paragraph=False, required=True
        )
        self.notes = _text("notes", notes, limit=MAX_CONTEXT_NOTES_CHARS)
        self.add_item(discord.ui.Label(text="Title", component=self.summary))
        self.add_item(discord.ui.Label(text="Context notes", component=self.notes))

    def build(self) -> Build:
        summary, notes = self.summary.value, self.notes.value
        return lambda plan: retitle(plan, summary, notes)

    def again(self) -> discord.ui.Modal:
        return TitleModal(self.revision, self.summary.value, self.notes.value)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await submit_edit(interaction, self.revision, self.build, self.again)


class ArrangeModal(discord.ui.Modal):
    """Remove a step, or move it to another position."""

    def __init__(self, revision: PlanRevision, step: str = "", to: str = "") -> None:
        super().__init__(**_form_title(f"Remove or move a step of v{revision.revision}"))
        self.revision = revision
        self.step = _text("step", step, limit=3, paragraph=False, required=True)
        self.to = _text(
            "to", to, limit=3, paragraph=False, placeholder="Leave empty to remove the step"
        )
        self.add_item(discord.ui.Label(text="Step number", component=self.step))
        self.add_item(discord.ui.Label(text="Move it to position", component=self.to))

    def build(self) -> Build:
        step, to = self.step.value.strip(), self.to.value.strip()
        for name, text in (("Step number", step), ("Move it to position", to)):
            if text and not text.isdigit():
                raise PlanValidationError([f"{name}: give a number such as 2, not {text!r}"])
        if not to:
            return lambda plan: remove_step(plan, int(step))
        return lambda plan: move_step(plan, int(step), int(to))

    def again(self) -> discord.ui.Modal:
        return ArrangeModal(self.revision, self.step.value, self.to.value)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await submit_edit(interaction, self.revision, self.build, self.again)


DIRECT_EDIT_BUTTONS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (DirectEditButton,)
