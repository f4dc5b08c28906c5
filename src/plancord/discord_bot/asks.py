"""Questions and permission requests an agent puts to a human, in the agent's channel.

The runtime awaits ``ask_user`` / ``ask_permission`` inside its tool loop; here they become a
question message (answered by the requester's next message or a reply to it) or an embed
with Allow / Deny buttons. The waiting side parks on ``Client.wait_for`` for a resolution
event, and the one place that decides (``take_answer`` for a message, ``decide`` for a
click) pops the live ask before dispatching it, so a double click or a racing answer acts
once.

Every open ask is also a row of ``pending_asks`` (``storage/pending_asks.py``). A coroutine
waiting in a process that died cannot be resumed, so after a restart ``restore`` marks each
leftover row expired: the message is edited (buttons disabled) and the row deleted.
Permission outcomes are written to the audit log with who decided and when.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import discord

from plancord.core.errors import PlancordError
from plancord.core.planning import Actor, AuditEntry, decision_refusal, may_decide
from plancord.core.ports import PermissionRequest, Question
from plancord.discord_bot.channel_io import MESSAGE_LIMIT, ChannelIO, send_chunks
from plancord.discord_bot.client import PlancordClient
from plancord.discord_bot.common import actor_from
from plancord.discord_bot.permission_card import (
    duration_text,
    labels_of,
    permission_embed,
    permission_view,
    user_id_of,
)
from plancord.storage.pending_asks import AskKind, PendingAskStore, StoredAsk

log = logging.getLogger(__name__)

RESOLVED_EVENT = "plancord_ask_resolved"
ACTION_CHARS = 1500
REMEMBERED_DECISIONS = 256
NO_MENTIONS = discord.AllowedMentions.none()


def new_ask_id() -> str:
    return secrets.token_hex(8)


# -- rendering -----------------------------------------------------------------------------


def _question_text(agent: str, text: str, mention: str) -> str:
    lead = f"{mention} " if mention else ""
    return (
        f"❓ {lead}**{agent}** asks:\n{text}\n"
        "-# Reply to this message, or just send your answer here."
    )


def _with_note(content: str, note: str) -> str:
    room = MESSAGE_LIMIT - len(note) - 2
    body = content if len(content) <= room else content[: room - 1] + "…"
    return f"{body}\n{note}"


# -- the live side -------------------------------------------------------------------------


@dataclass(slots=True)
class LiveAsk:
    """An ask a coroutine of this process is waiting on."""

    id: str
    agent: str
    kind: AskKind
    requested_by: str | None
    channel_id: int
    message_ids: list[int] = field(default_factory=list)
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    actor: Actor


class Asks:
    def __init__(self, bot: PlancordClient, io: ChannelIO) -> None:
        self.bot = bot
        self.io = io
        self._live: dict[str, LiveAsk] = {}
        self._decided: dict[str, str] = {}

    @property
    def store(self) -> PendingAskStore:
        return PendingAskStore(self.bot.app.db)

    def waiting(self, agent: str) -> bool:
        """True while the agent waits for a human's answer or decision."""
        return any(ask.agent == agent for ask in self._live.values())

    async def _record(
        self, ask_id: str, kind: AskKind, agent: str, payload: dict[str, Any], seconds: float
    ) -> None:
        now = self.bot.app.clock.now()
        await self.store.add(
            StoredAsk(
                id=ask_id,
                agent=agent,
                kind=kind,
                payload=payload,
                created_at=now,
                deadline=now + timedelta(seconds=seconds),
            )
        )

    async def _wait(self, ask_id: str, seconds: float) -> Any:
        """The resolution dispatched for ``ask_id``; ``TimeoutError`` when none came in time."""
        _, value = await self.bot.wait_for(
            RESOLVED_EVENT, check=lambda resolved, _value: resolved == ask_id, timeout=seconds
        )
        return value

    # -- ask_user --------------------------------------------------------------------------

    async def ask_user(self, question: Question) -> str | None:
        destination = await self.io.destination(question.agent)
        if destination is None:
            return None
        ask_id = new_ask_id()
        payload = {"text": question.text, "requested_by": question.requested_by}
        await self._record(ask_id, "question", question.agent, payload, question.timeout_seconds)
        user_id = user_id_of(question.requested_by)
        mention = f"<@{user_id}>" if user_id else ""
        allowed = discord.AllowedMentions(
            everyone=False,
            roles=False,
            replied_user=False,
            users=[discord.Object(id=user_id)] if user_id else False,
        )
        content = _question_text(question.agent, question.text, mention)
        messages = await send_chunks(destination, content, allowed_mentions=allowed)
        if not messages:
            await self.store.delete(ask_id)
            return None
        first = messages[0]
        live = LiveAsk(
            id=ask_id,
            agent=question.agent,
            kind="question",
            requested_by=question.requested_by,
            channel_id=first.channel.id,
            message_ids=[m.id for m in messages],
            payload=payload,
        )
        self._live[ask_id] = live
        try:
            await self.store.set_message(ask_id, first.channel.id, first.id)
            answer: str = await self._wait(ask_id, question.timeout_seconds)
        except TimeoutError:
            self._live.pop(ask_id, None)
            await self.store.delete(ask_id)
            note = (
                f"-# ⌛ No answer within {duration_text(question.timeout_seconds)}; "
                "the agent went on without one."
            )
            await _edit(first, content=_with_note(first.content, note))
            return None
        except BaseException:
            self._live.pop(ask_id, None)
            raise
        await self.store.delete(ask_id)
        return answer

    def take_answer(self, message: discord.Message) -> bool:
        """Hand ``message`` to the question it answers; True when it was taken as an answer.

        An answer is a reply to the question, or any message in the question's channel, from
        the member the agent asked (anyone, when the agent could not say who that is).
        """
        reference = message.reference.message_id if message.reference else None
        for ask in list(self._live.values()):
            if ask.kind != "question":
                continue
            if ask.requested_by is not None and str(message.author.id) != ask.requested_by:
                continue
            if reference in ask.message_ids or message.channel.id == ask.channel_id:
                self._live.pop(ask.id, None)
                answer = f"{message.clean_content}\n(answered by {message.author.display_name})"
                self.bot.dispatch(RESOLVED_EVENT, ask.id, answer)
                return True
        return False

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
            await _edit(
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
            await _refuse(interaction, text)
            return
        actor = actor_from(interaction.user)
        refusal = await self._refusal(actor, ask, allowing=allow)
        if refusal is not None:
            await _refuse(interaction, refusal)
            return
        if self._live.pop(ask_id, None) is None:
            await _refuse(
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

    def _remember(self, ask_id: str, outcome: str) -> None:
        """Keep recent outcomes so a late click hears who decided; old ones are dropped."""
        self._decided[ask_id] = outcome
        while len(self._decided) > REMEMBERED_DECISIONS:
            del self._decided[next(iter(self._decided))]

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
        """Mark every ask left over from an earlier process expired; its waiter is gone."""
        for ask in await self.store.all():
            if ask.id in self._live:
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
                await _edit(
                    message,
                    embed=permission_embed(
                        ask.agent, ask.payload, outcome=outcome, colour=discord.Colour.dark_grey()
                    ),
                    view=permission_view(ask.id, disabled=True, labels=labels_of(ask.payload)),
                )
            else:
                content = _question_text(ask.agent, str(ask.payload.get("text", "")), "")
                note = (
                    "-# ⌛ This question expired: plancord restarted before an answer. "
                    "Send your answer as a normal message."
                )
                await _edit(message, content=_with_note(content, note))
        await self.store.delete(ask.id)


async def _edit(
    message: discord.Message | discord.PartialMessage,
    *,
    content: str | None = None,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
) -> None:
    kwargs: dict[str, Any] = {"allowed_mentions": NO_MENTIONS}
    if content is not None:
        kwargs["content"] = content
    if embed is not None:
        kwargs["embed"] = embed
    if view is not None:
        kwargs["view"] = view
    try:
        await message.edit(**kwargs)
    except discord.HTTPException as exc:
        log.warning("could not edit message %s: %s", message.id, exc)


async def _refuse(interaction: discord.Interaction[discord.Client], text: str) -> None:
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as exc:
        log.warning("could not answer an interaction: %s", exc)
