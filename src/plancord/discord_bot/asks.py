"""Questions and permission requests an agent puts to a human, in the agent's channel.

The runtime awaits ``ask_user`` / ``ask_permission`` inside its tool loop; here they become a
question message (``questions.py``: answered by a message, a tap or a form) or an embed with
Allow / Deny buttons, decided under the approver policy.

Every open ask is also a row of ``pending_asks`` (``storage/pending_asks.py``). A coroutine
waiting in a process that died cannot be resumed, so after a restart ``restore`` marks each
leftover row expired: the message is edited (controls disabled) and the row deleted.
Permission outcomes are written to the audit log with who decided and when.
"""

from __future__ import annotations

import logging
from typing import Any

import discord

from plancord.core.errors import PlancordError
from plancord.core.planning import Actor, AuditEntry, decision_refusal, may_decide
from plancord.core.ports import PermissionRequest
from plancord.discord_bot.asks_base import (
    NO_MENTIONS,
    RESOLVED_EVENT,
    Decision,
    LiveAsk,
    edit_quietly,
    new_ask_id,
    refuse,
)
from plancord.discord_bot.common import actor_from
from plancord.discord_bot.permission_card import (
    labels_of,
    permission_embed,
    permission_view,
    user_id_of,
)
from plancord.discord_bot.questions import Questions
from plancord.storage.pending_asks import StoredAsk

log = logging.getLogger(__name__)

__all__ = ["Asks", "Decision", "LiveAsk"]


class Asks(Questions):
    # -- ask_permission --------------------------------------------------------------------

    async def ask_permission(self, request: PermissionRequest) -> bool | None:
        destination = await self.io.destination(request.agent)
        if destination is None:
            return None
        ask_id = new_ask_id()
        payload = {
            "action": request.action,
            "tool_name": request.tool_name,
            "summary": request.summary,
            "requested_by": request.requested_by,
            "timeout_seconds": request.timeout_seconds,
            "outside_plan": request.outside_plan,
            "labels": list(request.labels),
        }
        await self._record(ask_id, "permission", request.agent, payload, request.timeout_seconds)
        user_id = user_id_of(request.requested_by)
        try:
            message = await destination.send(
                f"<@{user_id}>" if user_id else None,
                embed=permission_embed(request.agent, payload),
                view=permission_view(ask_id, labels=request.labels),
                allowed_mentions=discord.AllowedMentions(
                    everyone=False,
                    roles=False,
                    users=[discord.Object(id=user_id)] if user_id else False,
                ),
            )
        except discord.HTTPException as exc:
            log.warning("could not post a permission request for %s: %s", request.agent, exc)
            await self.store.delete(ask_id)
            return None
        self._live[ask_id] = LiveAsk(
            id=ask_id,
            agent=request.agent,
            kind="permission",
            requested_by=request.requested_by,
            channel_id=message.channel.id,
            message_ids=[message.id],
            payload=payload,
        )
        try:
            await self.store.set_message(ask_id, message.channel.id, message.id)
            decision: Decision = await self._wait(ask_id, request.timeout_seconds)
        except TimeoutError:
            self._live.pop(ask_id, None)
            outcome = "Timed out — denied. Nothing was run."
            self._remember(ask_id, outcome)
            await self.store.delete(ask_id)
            await self._audit(
                request.agent, Actor.policy("permission_timeout"), "timed-out", payload, ask_id
            )
            await edit_quietly(
                message,
                embed=permission_embed(
                    request.agent, payload, outcome=outcome, colour=discord.Colour.dark_grey()
                ),
                view=permission_view(ask_id, disabled=True, labels=request.labels),
            )
            return None
        except BaseException:
            self._live.pop(ask_id, None)
            raise
        await self.store.delete(ask_id)
        await self._audit(
            request.agent,
            decision.actor,
            "allowed" if decision.allowed else "denied",
            payload,
            ask_id,
        )
        return decision.allowed

    async def decide(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, allow: bool
    ) -> None:
        """A click on Allow / Deny: check the approver policy, then resolve the ask once."""
        ask = self._live.get(ask_id)
        if ask is None or ask.kind != "permission":
            earlier = self._decided.get(ask_id)
            text = (
                f"This request was already decided: {earlier}"
                if earlier
                else "This request expired: nobody can answer it any more, and nothing was run."
            )
            await refuse(interaction, text)
            return
        actor = actor_from(interaction.user)
        refusal = await self._refusal(actor, ask, allowing=allow)
        if refusal is not None:
            await refuse(interaction, refusal)
            return
        if self._live.pop(ask_id, None) is None:
            await refuse(
                interaction, f"This request was already decided: {self._decided.get(ask_id, '')}"
            )
            return
        word = labels_of(ask.payload)[0 if allow else 1]
        outcome = (
            f"{'Allowed' if allow else 'Denied'} by {interaction.user.mention}"
            if (word in ("Allow", "Deny"))
            else f"{word} — chosen by {interaction.user.mention}"
        )
        self._remember(ask_id, outcome)
        self.bot.dispatch(RESOLVED_EVENT, ask_id, Decision(allow, actor))
        colour = discord.Colour.green() if allow else discord.Colour.red()
        try:
            await interaction.response.edit_message(
                embed=permission_embed(ask.agent, ask.payload, outcome=outcome, colour=colour),
                view=permission_view(ask_id, disabled=True, labels=labels_of(ask.payload)),
                allowed_mentions=NO_MENTIONS,
            )
        except discord.HTTPException as exc:
            log.warning("could not mark permission request %s decided: %s", ask_id, exc)

    async def _refusal(self, actor: Actor, ask: LiveAsk, *, allowing: bool) -> str | None:
        """Why ``actor`` may not decide this request (naming the rule), or None. Allowing an
        action counts as approving it: under the four-eyes rule its requester may not."""
        app = self.bot.app
        try:
            state = await app.store.load_state(ask.agent)
            settings = await app.settings.plan_mode_for(ask.agent)
        except PlancordError:
            return None if actor.is_admin else "Only server administrators can decide this now."
        state = state.model_copy(update={"requested_by": ask.requested_by})
        if not may_decide(actor, state, settings):
            return (
                "Only the member who gave the agent this task, members with an approver role "
                "or server administrators can decide this request."
            )
        why = decision_refusal(actor, state, settings, approving=allowing)
        if why is not None:
            return f"You cannot allow this: {why}. Deny stays open to you."
        return None

    async def _audit(
        self, agent: str, actor: Actor, outcome: str, payload: dict[str, Any], ask_id: str
    ) -> None:
        entry = AuditEntry(
            at=self.bot.app.clock.now(),
            agent=agent,
            actor=actor.label,
            action=f"permission-{outcome}",
            detail={"ask_id": ask_id, "action": payload.get("action")},
        )
        try:
            await self.bot.app.store.append_audit(entry)
        except PlancordError as exc:
            log.warning("could not audit permission request %s: %s", ask_id, exc)

    # -- after a restart -------------------------------------------------------------------

    async def restore(self) -> None:
        """Mark every ask left over from an earlier process expired; its waiter is gone. Asks
        of agents another process serves (``discord.shard_ids``) are that process's."""
        for ask in await self.store.all():
            if ask.id in self._live or not await self.bot.app.serves(ask.agent):
                continue
            await self._expire(ask)

    async def _expire(self, ask: StoredAsk) -> None:
        if ask.kind == "permission":
            await self._audit(ask.agent, Actor.policy("restart"), "expired", ask.payload, ask.id)
        if ask.channel_id is not None and ask.message_id is not None:
            message = self.bot.get_partial_messageable(ask.channel_id).get_partial_message(
                ask.message_id
            )
            if ask.kind == "permission":
                outcome = "Expired — plancord restarted before a decision. Nothing was run."
                await edit_quietly(
                    message,
                    embed=permission_embed(
                        ask.agent, ask.payload, outcome=outcome, colour=discord.Colour.dark_grey()
                    ),
                    view=permission_view(ask.id, disabled=True, labels=labels_of(ask.payload)),
                )
            else:
                await self._expire_question(ask, message)
        await self.store.delete(ask.id)
