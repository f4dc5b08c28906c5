"""Plan-mode changes as Discord messages, from whichever path caused them.

A decision can come from a button, a modal, a slash command, the operator CLI, the deadline
scheduler or the agent itself; each reaches Discord only through ``planning_changed``, so the
plan message, its buttons, the progress message and the channel lines look the same whatever
caused them. The plan message itself is ``PlanCards``'s (``message.py``); this part decides
what each change does to it, to the progress message and to the channel. Discord failures
are logged and never undo or block a decision: the planning state is the truth, the
messages are its picture.
"""

from __future__ import annotations

import logging

import discord

from plancord.core.errors import PlancordError, StalePlan
from plancord.core.planning import (
    ApprovalMode,
    AuditAction,
    EntrySource,
    Phase,
    PlanningState,
)
from plancord.core.ports import PlanningChange
from plancord.discord_bot.plan_card.edits import CoalescedEdits
from plancord.discord_bot.plan_card.message import PlanCards, change_reason, display_name
from plancord.discord_bot.plan_card.status import (
    Finish,
    cancelled_text,
    changes_requested_text,
    completed_text,
    entered_text,
    render_progress,
    timed_out_text,
)
from plancord.discord_bot.shared.channel_io import tell_bound_channel
from plancord.discord_bot.shared.client import PlancordClient
from plancord.discord_bot.shared.embed_basics import MODE_WORDS, clip
from plancord.storage.plan_messages import MessageStatus

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()


class PlanMessages:
    """The ``planning_changed`` side of the Discord notifier: each change to its message.

    ``progress_debounce`` is how long the progress message waits before an edit, so a burst
    of step updates becomes one edit."""

    def __init__(
        self, bot: PlancordClient, cards: PlanCards, *, progress_debounce: float = 1.0
    ) -> None:
        self.bot = bot
        self.cards = cards
        self.progress_debounce = progress_debounce
        self._edits = CoalescedEdits(lambda: self.progress_debounce)

    async def planning_changed(self, change: PlanningChange) -> None:
        handler = {
            AuditAction.ENTERED: self._entered,
            AuditAction.SUBMITTED: self._submitted,
            AuditAction.APPROVED: self._approved,
            AuditAction.CHANGES_REQUESTED: self._changes_requested,
            AuditAction.REJECTED: self._decided,
            AuditAction.CANCELLED: self._cancelled,
            AuditAction.TIMED_OUT: self._timed_out,
            AuditAction.COMPLETED: self._completed,
            AuditAction.STEP_UPDATED: self._step_updated,
            AuditAction.APPROVAL_VOTE: self._voted,
        }.get(change.action)
        if handler is not None:
            await handler(change)

    async def explain(self, exc: PlancordError) -> str:
        """The user-facing text of a refusal; a stale plan also points at the current one."""
        text = str(exc)
        if isinstance(exc, StalePlan):
            target = None
            if exc.current_revision is not None:
                target = await self.cards.store.get(exc.plan_id, exc.current_revision)
            if target is None:
                stale = await self.cards.store.get(exc.plan_id, exc.revision)
                if stale is not None:
                    latest = await self.cards.store.latest_for(stale.agent)
                    if latest is not None and latest.status is MessageStatus.PENDING:
                        target = latest
            if target is not None and (target.plan_id, target.revision) != (
                exc.plan_id,
                exc.revision,
            ):
                text += f"\nThe current plan (v{target.revision}): {self.cards.url_of(target)}"
        return text

    async def _entered(self, change: PlanningChange) -> None:
        source = change.after.entry_source
        if source in (EntrySource.DEFAULT, EntrySource.OPERATOR):
            await self._say(
                change.after.agent, entered_text(change.after.agent, change_reason(change))
            )

    async def _submitted(self, change: PlanningChange) -> None:
        revision = change.revision
        if revision is None:
            return
        if change.detail.get("auto_approved") is True:
            record = await self.cards.post_auto_approved(revision, change.after)
        else:
            record = await self.cards.post_for_review(revision, change.after)
        for older in await self.cards.store.for_plan(revision.plan_id):
            if older.revision >= revision.revision or older.status is MessageStatus.SUPERSEDED:
                continue
            updated = older.model_copy(
                update={
                    "status": MessageStatus.SUPERSEDED,
                    "superseded_by": revision.revision,
                    "updated_at": self.bot.app.clock.now(),
                }
            )
            await self.cards.store.put(updated)
            await self.cards.redraw(updated, successor=record)

    async def _approved(self, change: PlanningChange) -> None:
        mode = change.after.approval_mode
        note = MODE_WORDS[mode] if mode is not None and mode is not ApprovalMode.NORMAL else None
        before = await self._before_plan(change)
        if before is not None:
            note = f"{note}; {before}" if note else before
        record = await self.cards.record_outcome(change, note=note)
        revision = change.revision
        if record is None or revision is None:
            return
        embed = render_progress(
            revision,
            change.after.steps,
            approved_by=change.after.approved_by_name,
            mode=mode,
        )
        channel = self.cards.channel_of(record)
        try:
            message = await channel.send(embed=embed, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.warning("could not post the progress of %s", record.agent, exc_info=True)
            return
        await self.cards.store.put(record.model_copy(update={"progress_message_id": message.id}))

    async def _before_plan(self, change: PlanningChange) -> str | None:
        """What the approval put on the branch besides the plan: the work already in the
        workspace (uncommitted or untracked), which Merge brings too; None when none."""
        plan_id = change.after.plan_id
        paths = await self.bot.app.results.before_plan(plan_id) if plan_id else ()
        if not paths:
            return None
        shown = ", ".join(f"`{clip(p, 100)}`" for p in paths[:10])
        more = f" and {len(paths) - 10} more" if len(paths) > 10 else ""
        return (
            f"⚠️ already in the workspace, uncommitted, and on the branch from its start "
            f"(Merge brings it too; the completion card shows it): {shown}{more}"
        )

    async def _changes_requested(self, change: PlanningChange) -> None:
        feedback = str(change.detail.get("feedback") or "")
        step = change.detail.get("step")
        await self.cards.record_outcome(change, note=feedback)
        revision = change.revision.revision if change.revision else change.before.revision
        text = changes_requested_text(
            change.after.agent,
            revision,
            display_name(change.actor),
            feedback,
            step if isinstance(step, int) else None,
        )
        await self._say(change.after.agent, text)

    async def _voted(self, change: PlanningChange) -> None:
        """One more approval of a plan that needs several: show who approved so far."""
        revision = change.revision
        if revision is None:
            return
        record = await self.cards.store.get(revision.plan_id, revision.revision)
        if record is not None:
            await self.cards.redraw(record, revision=revision)

    async def _decided(self, change: PlanningChange) -> None:
        await self.cards.record_outcome(change, note=change_reason(change))

    async def _cancelled(self, change: PlanningChange) -> None:
        was = change.before.phase
        if was is Phase.SUBMITTED:
            await self.cards.record_outcome(change, note=change_reason(change))
        elif was is Phase.EXECUTING:
            await self._finish_progress(
                change, Finish(AuditAction.CANCELLED, display_name(change.actor))
            )
        text = cancelled_text(change.after.agent, display_name(change.actor), was)
        await self._say(change.after.agent, text)

    async def _timed_out(self, change: PlanningChange) -> None:
        which = str(change.detail.get("deadline") or "")
        if change.before.phase is Phase.SUBMITTED:
            await self.cards.record_outcome(change)
        await self._say(
            change.after.agent, timed_out_text(change.after.agent, which, change.before.revision)
        )

    async def _completed(self, change: PlanningChange) -> None:
        await self._finish_progress(change, Finish(AuditAction.COMPLETED))
        if change.revision is not None:
            summary = change.detail.get("summary")
            text = completed_text(change.revision, summary if isinstance(summary, str) else None)
            await self._say(change.after.agent, text)

    async def _step_updated(self, change: PlanningChange) -> None:
        await self._redraw_progress(change.after)

    async def _finish_progress(self, change: PlanningChange, finish: Finish) -> None:
        message_id = await self._redraw_progress(change.before, finish)
        if message_id is not None:
            await self._edits.flush(message_id)

    async def _redraw_progress(
        self, state: PlanningState, finish: Finish | None = None
    ) -> int | None:
        """Queue the edit of ``state``'s progress message (``finish`` once the execution
        ended); its id, or None when the execution shows none."""
        record, revision = await self.cards.progress_of(state)
        if record is None or revision is None or record.progress_message_id is None:
            return None
        embed = render_progress(
            revision,
            state.steps,
            approved_by=state.approved_by_name,
            mode=state.approval_mode,
            finish=finish,
            drift=await self.cards.drift_count(state),
        )
        message = self.cards.channel_of(record).get_partial_message(record.progress_message_id)
        self._edits.submit(message.id, lambda: message.edit(embed=embed))
        return message.id

    async def _say(self, agent: str, text: str) -> None:
        await tell_bound_channel(self.bot, agent, text)
