"""Permission requests an agent puts to a human in its channel: an embed with Allow / Deny
buttons (or a checkpoint's own two labels), decided under the approver policy; the outcome,
with who decided and when, is written to the audit log. Nothing runs unless a member the
policy accepts allows it: a timeout or a restart denies, and a card Discord would not show
even after retries (``posting.py``) is audited and raised as ``CardNotShown`` with the reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import discord

from plancord.core.errors import CardNotShown, PlancordError
from plancord.core.planning import Actor, AuditEntry, decision_refusal, may_decide
from plancord.core.ports import PermissionRequest
from plancord.discord_bot.asks.live import (
    NO_MENTIONS,
    Decision,
    LiveAsk,
    LiveAsks,
    Unanswered,
    edit_quietly,
    new_ask_id,
    refuse,
)
from plancord.discord_bot.asks.permission_card import (
    labels_of,
    permission_embed,
    permission_view,
    user_id_of,
)
from plancord.discord_bot.asks.posting import Card, card_name, plain_permission_text, post_card
from plancord.discord_bot.shared.channel_io import ChannelIO
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import actor_from
from plancord.storage.pending_asks import StoredAsk

log = logging.getLogger(__name__)


@dataclass
class Permissions:
    """The agent's permission requests: posted, decided once, expired after a restart."""

    bot: PlancordClient
    io: ChannelIO
    live: LiveAsks

    async def ask_permission(self, request: PermissionRequest) -> bool | None:
        """True allowed, False denied, None nobody decided in time. Raises ``CardNotShown``
        (audited with Discord's reason) when the card could not be shown even after retries:
        nothing runs, and the caller says so instead of "nobody answered"."""
        destination = await self.io.destination(request.agent)
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
        await self.live.record(
            ask_id, "permission", request.agent, payload, request.timeout_seconds
        )
        try:
            message = await post_card(destination, self.card(ask_id, request.agent, payload))
        except CardNotShown as exc:
            log.warning("could not post a %s card for %s: %s", exc.card, request.agent, exc)
            await self.live.store.delete(ask_id)
            await self._audit(
                request.agent,
                Actor.policy("discord"),
                "not-shown",
                payload,
                ask_id,
                reason=str(exc),
            )
            raise
        ask = LiveAsk(
            id=ask_id,
            agent=request.agent,
            kind="permission",
            requested_by=request.requested_by,
            channel_id=message.channel.id,
            message_ids=[message.id],
            payload=payload,
        )
        outcome = "Timed out — denied. Nothing was run."
        decision: Decision | CardNotShown | Unanswered = await self.live.wait_on(
            ask, message, request.timeout_seconds, unanswered=outcome
        )
        if isinstance(decision, Unanswered):
            await self._audit(
                request.agent, Actor.policy("permission_timeout"), "timed-out", payload, ask_id
            )
            await edit_quietly(
                decision.card,
                embed=permission_embed(
                    request.agent, payload, outcome=outcome, colour=discord.Colour.dark_grey()
                ),
                view=permission_view(ask_id, disabled=True, labels=request.labels),
            )
            return None
        if isinstance(decision, CardNotShown):
            # Deleted, and Discord would not take it again (``reposting.py``).
            await self._audit(
                request.agent,
                Actor.policy("discord"),
                "not-shown",
                payload,
                ask_id,
                reason=str(decision),
            )
            raise decision
        await self._audit(
            request.agent,
            decision.actor,
            "allowed" if decision.allowed else "denied",
            payload,
            ask_id,
        )
        return decision.allowed

    def card(self, ask_id: str, agent: str, payload: dict[str, Any]) -> Card:
        """The request's card as posted (and posted again when it is deleted)."""
        labels = labels_of(payload)
        user_id = user_id_of(payload.get("requested_by"))
        return Card(
            name=card_name(labels),
            content=f"<@{user_id}>" if user_id else None,
            embed=permission_embed(agent, payload),
            view=permission_view(ask_id, labels=labels),
            allowed_mentions=discord.AllowedMentions(
                everyone=False,
                roles=False,
                users=[discord.Object(id=user_id)] if user_id else False,
            ),
            plain=plain_permission_text(agent, payload),
        )

    async def decide(
        self, interaction: discord.Interaction[discord.Client], ask_id: str, allow: bool
    ) -> None:
        """A click on Allow / Deny: check the approver policy, then resolve the ask once."""
        ask = self.live.get(ask_id)
        if ask is None or ask.kind != "permission":
            earlier = self.live.outcome(ask_id)
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
        if self.live.pop(ask_id) is None:
            await refuse(
                interaction,
                f"This request was already decided: {self.live.outcome(ask_id) or ''}",
            )
            return
        word = labels_of(ask.payload)[0 if allow else 1]
        outcome = (
            f"{'Allowed' if allow else 'Denied'} by {interaction.user.mention}"
            if (word in ("Allow", "Deny"))
            else f"{word} — chosen by {interaction.user.mention}"
        )
        self.live.remember(ask_id, outcome)
        self.live.resolve(ask_id, Decision(allow, actor))
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
        self,
        agent: str,
        actor: Actor,
        outcome: str,
        payload: dict[str, Any],
        ask_id: str,
        *,
        reason: str | None = None,
    ) -> None:
        detail: dict[str, Any] = {"ask_id": ask_id, "action": payload.get("action")}
        if reason is not None:
            detail["reason"] = reason
        entry = AuditEntry(
            at=self.bot.app.clock.now(),
            agent=agent,
            actor=actor.label,
            action=f"permission-{outcome}",
            detail=detail,
        )
        try:
            await self.bot.app.store.append_audit(entry)
        except PlancordError as exc:
            log.warning("could not audit permission request %s: %s", ask_id, exc)

    async def expire(self, ask: StoredAsk, message: discord.PartialMessage | None) -> None:
        """A request left over from an earlier process: audited as expired, its card says so
        with the buttons off."""
        await self._audit(ask.agent, Actor.policy("restart"), "expired", ask.payload, ask.id)
        if message is None:
            return
        outcome = "Expired — plancord restarted before a decision. Nothing was run."
        await edit_quietly(
            message,
            embed=permission_embed(
                ask.agent, ask.payload, outcome=outcome, colour=discord.Colour.dark_grey()
            ),
            view=permission_view(ask.id, disabled=True, labels=labels_of(ask.payload)),
        )
