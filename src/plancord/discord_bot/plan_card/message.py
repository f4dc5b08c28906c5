"""The plan message: posting a plan with its buttons (as a file when Discord refuses the
card), redrawing it as decisions arrive, approvals and drift so far, the changes since the
last revision, and where each plan's messages live (``PlanMessageStore``), so the next
change, a stale click or a restart finds them again.

``PlanCards`` is the one object that touches a plan message; the parts that react to a
change (``changes``), a pick (``answers``) or a restart (``restore``) are given it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from typing import Any

import discord

from plancord.core.cost import cost_of
from plancord.core.execution import ExecutionEventKind
from plancord.core.plan_answers import PlanAnswer
from plancord.core.plan_comments import CommentSummary, summarise
from plancord.core.plan_diff import PlanDiff, revision_changes
from plancord.core.planning import (
    Actor,
    ActorKind,
    AuditAction,
    PlanningState,
    PlanRef,
    PlanRevision,
    RevisionAuthor,
)
from plancord.core.ports import PlanningChange
from plancord.core.schedule_runs import requester_label
from plancord.discord_bot.plan_card.answer_menu import plan_view
from plancord.discord_bot.plan_card.embed import Outcome, RenderedPlan, Supersession, render_plan
from plancord.discord_bot.plan_card.review import ReviewPart, add_review_buttons, review_part
from plancord.discord_bot.plan_card.status import auto_approved_text, review_request_text
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.embed_basics import CONTENT_LIMIT, clip, jump_url
from plancord.discord_bot.shared.message_fit import misfits
from plancord.storage.plan_messages import MessageStatus, PlanMessageRecord, PlanMessageStore

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()

_DECIDED_STATUS: Mapping[AuditAction | str, MessageStatus] = {
    AuditAction.APPROVED: MessageStatus.DECIDED,
    AuditAction.CHANGES_REQUESTED: MessageStatus.DECIDED,
    AuditAction.REJECTED: MessageStatus.DECIDED,
    AuditAction.CANCELLED: MessageStatus.CANCELLED,
    AuditAction.TIMED_OUT: MessageStatus.TIMED_OUT,
}


def display_name(actor: Actor) -> str | None:
    """How a decision's author is shown: people by name, the scheduler not at all."""
    if actor.kind is ActorKind.SCHEDULER:
        return None
    if actor.kind is ActorKind.OPERATOR:
        return "the operator"
    if actor.kind is ActorKind.POLICY:
        return f"policy ({actor.name})"
    return actor.name


def change_reason(change: PlanningChange) -> str | None:
    return audit_reason(change.detail)


def audit_reason(detail: Mapping[str, Any]) -> str | None:
    reason = detail.get("reason")
    return reason if isinstance(reason, str) and reason else None


class CardMisfit(Exception):
    """A plan message that would pass one of Discord's limits, found before sending it."""


class _Posting(Enum):
    """Why a plan message is posted, which decides whom it pings and what it asks."""

    FOR_REVIEW = "for review"
    AGAIN = "again"
    AUTO_APPROVED = "auto-approved"


class PlanCards:
    """Every plan message of the agents this process serves, and the records that say where
    each one is and what it shows."""

    def __init__(self, bot: PlancordClient) -> None:
        self.bot = bot

    @property
    def store(self) -> PlanMessageStore:
        return self.bot.app.plan_messages

    @staticmethod
    def url_of(record: PlanMessageRecord) -> str:
        return jump_url(record.guild_id, record.channel_id, record.message_id)

    def channel_of(self, record: PlanMessageRecord) -> discord.PartialMessageable:
        return self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)

    def _guild_of(self, channel_id: int) -> int | None:
        channel = self.bot.get_channel(channel_id)
        guild = getattr(channel, "guild", None)
        return guild.id if isinstance(guild, discord.Guild) else None

    async def post_for_review(
        self, revision: PlanRevision, state: PlanningState
    ) -> PlanMessageRecord | None:
        """Post a submitted plan with its buttons, pinging the requester to review it."""
        return await self._post(revision, state, _Posting.FOR_REVIEW)

    async def post_again(
        self, revision: PlanRevision, state: PlanningState
    ) -> PlanMessageRecord | None:
        """Post a plan still waiting for review again (its message was deleted, or is
        restored after a restart), pinging nobody."""
        return await self._post(revision, state, _Posting.AGAIN)

    async def post_auto_approved(
        self, revision: PlanRevision, state: PlanningState
    ) -> PlanMessageRecord | None:
        """Post a plan a setting approved (``require_approval: false``), saying no review is
        asked for, pinging nobody."""
        return await self._post(revision, state, _Posting.AUTO_APPROVED)

    async def _post(
        self, revision: PlanRevision, state: PlanningState, posting: _Posting
    ) -> PlanMessageRecord | None:
        auto = posting is _Posting.AUTO_APPROVED
        agent = await self.bot.app.store.get_agent(revision.agent)
        if agent.channel_id is None:
            return None
        channel = self.bot.get_partial_messageable(
            agent.channel_id, guild_id=agent.guild_id or self._guild_of(agent.channel_id)
        )
        requester = requester_label(state)
        needed = (await self.bot.app.settings.plan_mode_for(revision.agent)).approvals
        cost = await self._cost_line(revision, state)
        answers = await self.answers_of(revision)
        review, _ = await review_part(self.bot.app, revision, step_url=None, reviewing=not auto)
        rendered = render_plan(
            revision,
            requested_by=requester,
            changes=await self.changes_of(revision),
            votes=f"👍 **Approvals 0 of {needed}**" if needed > 1 and not auto else None,
            cost=cost,
            answers=answers,
            review=review,
            network_anything=self.bot.app.config.network_bound(revision.agent).anything,
            comments=await self.comments_of(revision),
        )
        user_id = state.requested_by if posting is _Posting.FOR_REVIEW else None
        pinged = int(user_id) if user_id is not None and user_id.isdigit() else None
        content = (
            auto_approved_text(revision.agent, revision.revision)
            if auto
            else review_request_text(
                revision.agent,
                revision.revision,
                f"<@{pinged}>" if pinged else None,
                amends=state.amends,
                edited_by=revision.edited_by_name
                if revision.author is RevisionAuthor.HUMAN_EDIT
                else None,
            )
        )
        allowed = (
            discord.AllowedMentions(users=[discord.Object(pinged)], roles=False, everyone=False)
            if pinged
            else NO_MENTIONS
        )
        view = add_review_buttons(
            plan_view(revision, answers=answers), revision, review, disabled=False
        )
        payload = _plan_payload(rendered)
        problems = misfits(
            content=content, embeds=rendered.embeds, view=view, files=payload.get("files", ())
        )
        try:
            if problems:
                raise CardMisfit("; ".join(problems))
            message = await channel.send(content, **payload, view=view, allowed_mentions=allowed)
        except (discord.HTTPException, CardMisfit) as exc:
            log.warning(
                "could not post plan v%s of %s", revision.revision, agent.name, exc_info=True
            )
            reason = exc.text if isinstance(exc, discord.HTTPException) else str(exc)
            fallback = await _post_plan_as_file(
                channel, revision, rendered, content, allowed, reason or str(exc)
            )
            if fallback is None:
                return None
            message = fallback
        now = self.bot.app.clock.now()
        previous = await self.store.get(revision.plan_id, revision.revision)
        record = (
            previous.model_copy(
                update={"channel_id": channel.id, "message_id": message.id, "updated_at": now}
            )
            if previous is not None
            else PlanMessageRecord(
                plan_id=revision.plan_id,
                revision=revision.revision,
                agent=revision.agent,
                guild_id=channel.guild_id,
                channel_id=channel.id,
                message_id=message.id,
                requested_by_name=requester,
                posted_at=now,
                updated_at=now,
                cost=cost,
            )
        )
        return await self.store.put(record)

    async def _cost_line(
        self, revision: PlanRevision, state: PlanningState, end: datetime | None = None
    ) -> str | None:
        """What planning cost from entering plan mode to this revision's submission, or to
        ``end`` (when its review was kept, so the review's own call counts)."""
        start = state.entered_at or revision.submitted_at
        calls = await self.bot.app.conversations.usage_between(
            revision.agent, start, end or revision.submitted_at
        )
        cost = cost_of(calls, self.bot.config.anthropic.prices)
        return cost.line() if cost is not None else None

    async def record_outcome(
        self, change: PlanningChange, *, note: str | None = None
    ) -> PlanMessageRecord | None:
        revision = change.revision
        if revision is None:
            return None
        record = await self.store.get(revision.plan_id, revision.revision)
        if record is None:
            return None
        return await self.mark_outcome(
            record, change.action, change.actor, self.bot.app.clock.now(), note, revision
        )

    async def mark_outcome(
        self,
        record: PlanMessageRecord,
        action: AuditAction | str,
        actor: Actor | None,
        at: datetime,
        note: str | None,
        revision: PlanRevision | None = None,
    ) -> PlanMessageRecord:
        """Store the outcome on the message's record and redraw it, buttons off."""
        status = _DECIDED_STATUS.get(action, MessageStatus.DECIDED)
        if record.status is MessageStatus.SUPERSEDED:
            status = MessageStatus.SUPERSEDED
        updated = record.model_copy(
            update={
                "status": status,
                "outcome": action,
                "outcome_by": display_name(actor) if actor is not None else None,
                "outcome_at": at,
                "outcome_note": note or None,
                "updated_at": self.bot.app.clock.now(),
            }
        )
        await self.store.put(updated)
        if await self.redraw(updated, revision=revision):
            return updated
        # The decision stands but the message still shows live buttons. Keep the record
        # pending so the next start settles it again, and say in the channel what happened.
        unsettled = updated.model_copy(update={"status": MessageStatus.PENDING})
        await self.store.put(unsettled)
        who = f" by {updated.outcome_by}" if updated.outcome_by else ""
        try:
            await self.channel_of(record).send(
                f"⚠️ The message of plan v{record.revision} of **{record.agent}** could not "
                f"be updated; its buttons no longer apply (the plan was {action}{who}).",
                allowed_mentions=NO_MENTIONS,
            )
        except discord.HTTPException:
            log.warning("could not report a stale plan message", exc_info=True)
        return unsettled

    async def show_review(self, plan_id: str, number: int) -> None:
        """A revision's review was kept: count it in the cost line, then redraw the message
        with its line, its findings and the full review in the attached file."""
        record = await self.store.get(plan_id, number)
        revision = await self.bot.app.store.get_revision(plan_id, number)
        if record is None or revision is None:
            return
        _, finished = await review_part(self.bot.app, revision, step_url=None, reviewing=False)
        state = await self.bot.app.store.load_state(revision.agent)
        if finished is not None and state.plan_id == plan_id and state.entered_at is not None:
            cost = await self._cost_line(revision, state, finished)
            record = await self.store.put(record.model_copy(update={"cost": cost}))
        await self.redraw(record, revision=revision, with_files=True)

    async def redraw(
        self,
        record: PlanMessageRecord,
        *,
        revision: PlanRevision | None = None,
        successor: PlanMessageRecord | None = None,
        with_files: bool = False,
    ) -> bool:
        """Edit a plan message to what the record says: outcome, supersession, buttons off;
        ``with_files`` attaches the plan's file (with its review) and changes again.
        False when Discord refused the edit, so the message may still show live buttons."""
        revision = revision or await self.bot.app.store.get_revision(
            record.plan_id, record.revision
        )
        if revision is None:
            return True
        answers = await self.answers_of(revision)
        review, _ = await review_part(
            self.bot.app, revision, step_url=self.url_of(record), reviewing=False
        )
        rendered = self._render(
            record,
            revision,
            successor,
            await self.changes_of(revision),
            await self._votes_line(record),
            answers,
            review,
            await self.comments_of(revision),
        )
        waiting = record.status is MessageStatus.PENDING
        message = self.channel_of(record).get_partial_message(record.message_id)
        view = plan_view(revision, disabled=not waiting, answers=answers)
        files: dict[str, Any] = {}
        if with_files:
            files["attachments"] = _plan_payload(rendered, always_file=True).get("files", [])
        try:
            await message.edit(
                embeds=rendered.embeds,
                view=add_review_buttons(view, revision, review, disabled=not waiting),
                **files,
            )
        except discord.NotFound:
            return True  # a deleted message shows no buttons
        except discord.HTTPException:
            log.warning(
                "could not update the message of plan v%s of %s",
                record.revision,
                record.agent,
                exc_info=True,
            )
            return False
        return True

    async def _votes_line(self, record: PlanMessageRecord) -> str | None:
        """``👍 Approvals 1 of 2: ana`` for a waiting plan that needs several approvals."""
        if record.status is not MessageStatus.PENDING:
            return None
        needed = (await self.bot.app.settings.plan_mode_for(record.agent)).approvals
        if needed < 2:
            return None
        ref = PlanRef(agent=record.agent, plan_id=record.plan_id, revision=record.revision)
        names = await self.bot.app.planning.approvals(ref)
        shown = f": {', '.join(names)}" if names else ""
        return f"👍 **Approvals {len(names)} of {needed}**{shown}"

    async def drift_count(self, state: PlanningState) -> int:
        """Calls outside the approved plan so far: the execution's drift events, as the
        completion card lists them."""
        if state.plan_id is None:
            return 0
        drift = ExecutionEventKind.DRIFT
        return len(await self.bot.app.executions.events(state.plan_id, drift))

    async def answers_of(self, revision: PlanRevision) -> dict[int, PlanAnswer]:
        """The picks so far for the revision's questions with choices (none to read when
        no question offers any)."""
        if not revision.plan.question_choices:
            return {}
        return await self.bot.app.plan_answers.for_revision(revision.plan_id, revision.revision)

    async def comments_of(self, revision: PlanRevision) -> CommentSummary:
        """The comments on the plan, as the message of ``revision`` shows them."""
        found = await self.bot.app.plan_comments.for_plan(revision.plan_id)
        return summarise(found, revision.revision)

    async def changes_of(self, revision: PlanRevision) -> PlanDiff | None:
        """What changed since the previous revision, with the feedback that asked for it."""
        plan_id, number = revision.plan_id, revision.revision
        return await revision_changes(self.bot.app.store, plan_id, number - 1, number)

    def _render(
        self,
        record: PlanMessageRecord,
        revision: PlanRevision,
        successor: PlanMessageRecord | None = None,
        changes: PlanDiff | None = None,
        votes: str | None = None,
        answers: dict[int, PlanAnswer] | None = None,
        review: ReviewPart | None = None,
        comments: CommentSummary | None = None,
    ) -> RenderedPlan:
        outcome = None
        if record.outcome is not None and record.outcome_at is not None:
            outcome = Outcome(
                record.outcome, record.outcome_by, record.outcome_at, record.outcome_note
            )
        superseded = None
        if record.superseded_by is not None:
            url = self.url_of(successor) if successor is not None else None
            superseded = Supersession(record.superseded_by, url)
        return render_plan(
            revision,
            requested_by=record.requested_by_name,
            outcome=outcome,
            superseded=superseded,
            changes=changes,
            votes=votes,
            cost=record.cost,
            answers=answers,
            review=review,
            network_anything=self.bot.app.config.network_bound(revision.agent).anything,
            comments=comments,
        )

    async def progress_of(
        self, state: PlanningState
    ) -> tuple[PlanMessageRecord | None, PlanRevision | None]:
        if state.plan_id is None or state.revision == 0:
            return None, None
        record = await self.store.get(state.plan_id, state.revision)
        revision = await self.bot.app.store.get_revision(state.plan_id, state.revision)
        return record, revision


async def _post_plan_as_file(
    channel: discord.PartialMessageable,
    revision: PlanRevision,
    rendered: RenderedPlan,
    content: str,
    allowed: discord.AllowedMentions,
    reason: str,
) -> discord.Message | None:
    """The plan message Discord refused, again without its embed: the plan as its markdown
    file under the same buttons. If even that fails, a plain line says the plan exists and
    how to decide on it, so a plan is never waiting for a decision nobody can see."""
    note = (
        f"{content}\n(The plan's summary card could not be shown: {clip(reason, 300)}. "
        f"The whole plan is in the attached file.)"
    )
    try:
        return await channel.send(
            clip(note, CONTENT_LIMIT),
            file=rendered.file(),
            view=plan_view(revision),
            allowed_mentions=allowed,
        )
    except discord.HTTPException:
        log.warning("could not post plan v%s as a file either", revision.revision, exc_info=True)
    try:
        await channel.send(
            f"⚠️ Plan v{revision.revision} of **{revision.agent}** is waiting for a decision but "
            "could not be shown here. `/plan status` shows it; `/plan approve`, `/plan edit` "
            "and `/plan reject` decide. It is posted again when plancord restarts.",
            allowed_mentions=NO_MENTIONS,
        )
    except discord.HTTPException:
        log.warning("could not say that plan v%s is hidden", revision.revision, exc_info=True)
    return None


def _plan_payload(rendered: RenderedPlan, *, always_file: bool = False) -> dict[str, Any]:
    payload: dict[str, Any] = {"embeds": rendered.embeds}
    files = [rendered.file()] if rendered.overflow or always_file else []
    changes = rendered.changes_file()
    if changes is not None:
        files.append(changes)
    if files:
        payload["files"] = files
    return payload
