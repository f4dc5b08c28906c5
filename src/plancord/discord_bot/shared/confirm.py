"""One confirmation prompt for every destructive command: Confirm / Cancel, for one user.

Only the member who ran the command may answer; anyone else is refused with an ephemeral
message and the prompt stays open. A click disables both buttons at once, so the decision
is visible immediately and cannot be clicked twice. When nobody answers in time the buttons
are disabled and ``value`` stays None.

    view = ConfirmView(author_id=interaction.user.id)
    await interaction.response.send_message("Remove it?", view=view)
    view.message = await interaction.original_response()
    await view.wait()
    if view.value: ...
"""

from __future__ import annotations

import logging
from typing import Any

import discord

log = logging.getLogger(__name__)

NOT_YOURS = "Only the member who ran this command can answer this prompt."


class ConfirmView(discord.ui.View):
    def __init__(
        self,
        *,
        author_id: int,
        timeout: float = 120.0,
        confirm_label: str = "Confirm",
        confirm_style: discord.ButtonStyle = discord.ButtonStyle.danger,
    ) -> None:
        super().__init__(timeout=timeout)
        self.author_id = author_id
        self.value: bool | None = None
        self.message: discord.Message | discord.InteractionMessage | None = None
        self.confirm.label = confirm_label
        self.confirm.style = confirm_style

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        if interaction.user.id == self.author_id:
            return True
        await interaction.response.send_message(NOT_YOURS, ephemeral=True)
        return False

    def _disable(self) -> None:
        for item in self.children:
            if isinstance(item, discord.ui.Button):
                item.disabled = True

    async def _decide(self, interaction: discord.Interaction[Any], value: bool) -> None:
        self.value = value
        self._disable()
        self.stop()
        try:
            await interaction.response.edit_message(view=self)
        except discord.HTTPException as exc:
            log.warning("could not close a confirmation prompt: %s", exc)

    @discord.ui.button(label="Confirm", style=discord.ButtonStyle.danger)
    async def confirm(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[ConfirmView]
    ) -> None:
        await self._decide(interaction, True)

    @discord.ui.button(label="Cancel", style=discord.ButtonStyle.secondary)
    async def cancel(
        self, interaction: discord.Interaction[Any], button: discord.ui.Button[ConfirmView]
    ) -> None:
        await self._decide(interaction, False)

    async def on_timeout(self) -> None:
        self._disable()
        if self.message is None:
            return
        try:
            await self.message.edit(view=self)
        except discord.HTTPException as exc:
            log.warning("could not close a timed-out confirmation prompt: %s", exc)
