"""Permission requests an agent puts to a human in its channel (a call the profile holds, a
drift, a 🔴 step's checkpoint): an embed with Allow / Deny buttons (or a checkpoint's own two
labels). A click is translated into the act it takes and judged by the authority
(``core.ask_authority``), which also writes the outcome, with who decided and when, to the
audit log; this module posts, waits and renders. Nothing runs unless a member the policy
accepts allows it: a timeout or a restart denies, and a card Discord would not show even
after retries (``posting.py``) is audited and raised as ``CardNotShown`` with the reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import discord

from plancord.core.authority import ACTS, Answer, Decision, Subject
from plancord.core.errors import CardNotShown
from plancord.core.planning import Actor, AuditAction
from plancord.core.ports import PermissionRequest
from plancord.discord_bot.asks.live import (
    NO_MENTIONS,
    ClickWords,
    LiveAsk,
    LiveAsks,
    Unanswered,
    edit_quietly,
    new_ask_id,
    redraw_card,
    refuse,
)
from plancord.discord_bot.asks.permission_card import (
    labels_of,
    permission_embed,
    permission_view,
    user_id_of,
)
from plancord.discord_bot.asks.posting import Card, card_name, plain_permission_text, post_card
from plancord.discord_bot.asks.remember import add_remember_buttons
from plancord.discord_bot.shared.channel_io import ChannelIO
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.common import acknowledge
from plancord.storage.pending_asks import StoredAsk

log = logging.getLogger(__name__)

CLICK_WORDS = ClickWords(
    settled="This request was already decided: {outcome}",
    expired="This request expired: nobody can answer it any more, and nothing was run.",
)


@dataclass
class Permissions:
    """The agent's permission requests: posted, decided once, expired after a restart."""

    bot: PlancordClient
    io: ChannelIO
    live: LiveAsks

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        """Allowed, denied, or timed out (nobody decided in time). Raises ``CardNotShown``
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
            "subject": request.subject.value,
            "deciders": await self.bot.app.asks.deciders(request.agent),
            "remember": request.remember.to_json() if request.remember else None,
            "applies": request.applies,
        }
        stored = await self.live.record(
            ask_id, "permission", request.agent, payload, request.timeout_seconds
        )
        try:
            message = await post_card(destination, self.card(ask_id, request.agent, payload))
        except CardNotShown as exc:
            log.warning("could not post a %s card for %s: %s", exc.card, request.agent, exc)
            await self.live.store.delete(ask_id)
            await self._not_shown(stored, exc)
            raise
        ask = LiveAsk.posted(stored, request.requested_by, [message])
        outcome = "Timed out — denied. Nothing was run."
        decision: Decision | CardNotShown | Unanswered = await self.live.wait_on(
            ask, message, request.timeout_seconds, unanswered=outcome
        )
        if isinstance(decision, Unanswered):
            await self._audit(
                request.agent,
                Actor.policy("permission_timeout"),
                Answer.TIMED_OUT.audit_action,
                payload,
                ask_id,
            )
            await self._close(decision.card, stored, outcome)
            return Answer.TIMED_OUT
        if isinstance(decision, CardNotShown):
            # Deleted, and Discord would not take it again (``reposting.py``).
            await self._not_shown(stored, decision)
            raise decision
        answer = decision.answer
        await self._audit(request.agent, decision.actor, answer.audit_action, payload, ask_id)
        return answer

    def card(self, ask_id: str, agent: str, payload: dict[str, Any]) -> Card:
        """The request's card as posted (and posted again when it is deleted)."""
        labels = labels_of(payload)
        user_id = user_id_of(payload.get("requested_by"))
        view = permission_view(ask_id, labels=labels)
        add_remember_buttons(view, ask_id, payload)
        return Card(
            name=card_name(labels),
            content=f"<@{user_id}>" if user_id else None,
            embed=permission_embed(agent, payload),
            view=view,
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
        """A click on Allow / Deny: answered at once (a deferred update: the policy reads the
        store and a refusal writes its audit row, which may take longer than Discord waits),
        then the approver policy is checked and the ask resolved once. A click on an ask this
        process no longer waits on is told so at once, from memory."""
        ask = await self.live.clicked(interaction, ask_id, "permission", CLICK_WORDS)
        if ask is None:
            return
        await acknowledge(interaction)
        subject = subject_of(ask.payload)
        detail = {"ask_id": ask_id, "action": ask.payload.get("action")}
        verdict = await self.live.judged(
            interaction, ask, subject, ACTS[subject][0 if allow else 1], detail
        )
        if verdict is None:
            return
        word = labels_of(ask.payload)[0 if allow else 1]
        outcome = (
            f"{'Allowed' if allow else 'Denied'} by {interaction.user.mention}"
            if (word in ("Allow", "Deny"))
            else f"{word} — chosen by {interaction.user.mention}"
        )
        if not self.live.settle(ask_id, outcome, verdict):
            await refuse(interaction, CLICK_WORDS.taken(self.live.outcome(ask_id)))
            return
        colour = discord.Colour.green() if allow else discord.Colour.red()
        await redraw_card(
            self.bot,
            interaction,
            ask,
            embed=permission_embed(ask.agent, ask.payload, outcome=outcome, colour=colour),
            view=permission_view(ask_id, disabled=True, labels=labels_of(ask.payload)),
            allowed_mentions=NO_MENTIONS,
        )

    async def _audit(
        self,
        agent: str,
        actor: Actor,
        action: AuditAction,
        payload: dict[str, Any],
        ask_id: str,
        *,
        reason: str | None = None,
    ) -> None:
        detail = {"ask_id": ask_id, "action": payload.get("action")}
        await self.bot.app.asks.record(
            action, actor, agent, detail, subject=subject_of(payload), reason=reason
        )

    async def _not_shown(self, ask: StoredAsk, exc: CardNotShown) -> None:
        """Audit that Discord would not show the card, with its reason."""
        await self._audit(
            ask.agent,
            Actor.policy("discord"),
            Answer.NOT_SHOWN.audit_action,
            ask.payload,
            ask.id,
            reason=str(exc),
        )

    async def _close(
        self, card: discord.Message | discord.PartialMessage, ask: StoredAsk, outcome: str
    ) -> None:
        """Mark the card of an ask nobody decided: its ``outcome``, greyed, buttons off."""
        await edit_quietly(
            card,
            embed=permission_embed(
                ask.agent, ask.payload, outcome=outcome, colour=discord.Colour.dark_grey()
            ),
            view=permission_view(ask.id, disabled=True, labels=labels_of(ask.payload)),
        )

    async def expire(self, ask: StoredAsk, message: discord.PartialMessage | None) -> None:
        """A request left over from an earlier process: audited as expired, its card says so
        with the buttons off."""
        await self._audit(
            ask.agent, Actor.policy("restart"), AuditAction.PERMISSION_EXPIRED, ask.payload, ask.id
        )
        if message is None:
            return
        await self._close(
            message, ask, "Expired — plancord restarted before a decision. Nothing was run."
        )


def subject_of(payload: dict[str, Any]) -> Subject:
    """What a stored request asks about (a permission, for a row from before it was kept)."""
    subject = payload.get("subject")
    asked = (Subject.PERMISSION, Subject.DRIFT, Subject.CHECKPOINT)
    return next((s for s in asked if s.value == subject), Subject.PERMISSION)
