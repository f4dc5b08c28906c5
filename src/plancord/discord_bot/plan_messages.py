"""Plan-mode changes as Discord messages, from whichever path caused them.

A decision can come from a button, a modal, a slash command, the operator CLI, the deadline
scheduler or the agent itself; each reaches Discord only through ``planning_changed``, so the
plan message, its buttons, the progress message and the channel lines look the same whatever
caused them. Where each message lives is kept in ``PlanMessageStore`` so the next change, a
stale click or a restart finds it again. Discord failures are logged and never undo or block a
decision: the planning state is the truth, the messages are its picture.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

import discord

from plancord.core.errors import PlancordError, StalePlan
from plancord.core.plan_diff import PlanDiff, revision_changes
from plancord.core.planning import (
    Actor,
    ActorKind,
    ApprovalMode,
    EntrySource,
    Phase,
    PlanningState,
    PlanRef,
    PlanRevision,
)
from plancord.core.ports import PlanningChange
from plancord.discord_bot.client import PlancordClient
from plancord.discord_bot.embeds import (
    MODE_WORDS,
    Finish,
    Outcome,
    RenderedPlan,
    Supersession,
    auto_approved_text,
    cancelled_text,
    changes_requested_text,
    completed_text,
    entered_text,
    jump_url,
    render_plan,
    render_progress,
    review_request_text,
    timed_out_text,
)
from plancord.discord_bot.views import plan_buttons
from plancord.storage.plan_messages import MessageStatus, PlanMessageRecord, PlanMessageStore

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()

_DECIDED_STATUS = {
    "approved": MessageStatus.DECIDED,
    "changes-requested": MessageStatus.DECIDED,
    "rejected": MessageStatus.DECIDED,
    "cancelled": MessageStatus.CANCELLED,
    "timed-out": MessageStatus.TIMED_OUT,
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


class CoalescedEdits:
    """At most one edit in flight per message; while one is in flight (or waiting out the
    debounce), newer contents replace older ones, so only the latest is ever sent next."""

    def __init__(self, debounce: Callable[[], float]) -> None:
        self._debounce = debounce
        self._latest: dict[int, Callable[[], Awaitable[Any]]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}

    def submit(self, message_id: int, edit: Callable[[], Awaitable[Any]]) -> None:
        self._latest[message_id] = edit
        worker = self._workers.get(message_id)
        if worker is None or worker.done():
            self._workers[message_id] = asyncio.create_task(
                self._drain(message_id), name=f"plancord-progress-{message_id}"
            )

    async def flush(self, message_id: int) -> None:
        """Wait until the latest submitted content for ``message_id`` has been sent."""
        worker = self._workers.get(message_id)
        if worker is not None:
            await asyncio.shield(worker)

    async def _drain(self, message_id: int) -> None:
        try:
            while message_id in self._latest:
                delay = self._debounce()
                if delay > 0:
                    await asyncio.sleep(delay)
                edit = self._latest.pop(message_id)
                try:
                    await edit()
                except discord.HTTPException:
                    log.warning("could not update progress message %s", message_id, exc_info=True)
        finally:
            self._workers.pop(message_id, None)


class PlanMessages:
    def __init__(self, bot: PlancordClient, *, progress_debounce: float = 1.0) -> None:
        self.bot = bot
        self.progress_debounce = progress_debounce
        self._edits = CoalescedEdits(lambda: self.progress_debounce)
        self._store: PlanMessageStore | None = None

    @property
    def store(self) -> PlanMessageStore:
        db = self.bot.app.db
        if self._store is None or self._store.db is not db:
            self._store = PlanMessageStore(db)
        return self._store

    # -- the Notifier side -----------------------------------------------------------------

    async def planning_changed(self, change: PlanningChange) -> None:
        handler = {
            "entered": self._entered,
            "submitted": self._submitted,
            "approved": self._approved,
            "changes-requested": self._changes_requested,
            "rejected": self._decided,
            "cancelled": self._cancelled,
            "timed-out": self._timed_out,
            "completed": self._completed,
            "step-updated": self._step_updated,
            "approval-vote": self._voted,
        }.get(change.action)
        if handler is not None:
            await handler(change)

    async def restore(self) -> None:
        """After a (re)start: settle the plan messages whose decision was made while nothing
        could update them, then post again every waiting plan (and running progress) message
        that was deleted or never made it to Discord. Buttons need no re-attaching: they are
        dynamic items and reload everything from the store when clicked."""
        for record in await self.store.pending():
            try:
                await self._settle(record)
            except (discord.HTTPException, PlancordError):
                log.warning(
                    "could not settle the message of plan v%s of %s",
                    record.revision,
                    record.agent,
                    exc_info=True,
                )
        for state in await self.bot.app.store.list_states():
            if state.plan_id is None or state.revision == 0:
                continue
            try:
                if state.phase is Phase.SUBMITTED:
                    await self._restore_plan_message(state, state.plan_id)
                elif state.phase is Phase.EXECUTING:
                    await self._restore_progress_message(state)
            except discord.HTTPException:
                log.warning("could not restore the plan message of %s", state.agent, exc_info=True)

    async def explain(self, exc: PlancordError) -> str:
        """The user-facing text of a refusal; a stale plan also points at the current one."""
        text = str(exc)
        if isinstance(exc, StalePlan):
            target = None
            if exc.current_revision is not None:
                target = await self.store.get(exc.plan_id, exc.current_revision)
            if target is None:
                stale = await self.store.get(exc.plan_id, exc.revision)
                if stale is not None:
                    latest = await self.store.latest_for(stale.agent)
                    if latest is not None and latest.status is MessageStatus.PENDING:
                        target = latest
            if target is not None and (target.plan_id, target.revision) != (
                exc.plan_id,
                exc.revision,
            ):
                text += f"\nThe current plan (v{target.revision}): {self.url_of(target)}"
        return text

    @staticmethod
    def url_of(record: PlanMessageRecord) -> str:
        return jump_url(record.guild_id, record.channel_id, record.message_id)

    # -- changes ---------------------------------------------------------------------------

    async def _entered(self, change: PlanningChange) -> None:
        source = change.after.entry_source
        if source in (EntrySource.DEFAULT, EntrySource.OPERATOR):
            await self._say(change.after.agent, entered_text(change.after.agent, _reason(change)))

    async def _submitted(self, change: PlanningChange) -> None:
        revision = change.revision
        if revision is None:
            return
        auto = change.detail.get("auto_approved") is True
        record = await self._post_plan(revision, change.after, mention=not auto, auto=auto)
        for older in await self.store.for_plan(revision.plan_id):
            if older.revision >= revision.revision or older.status is MessageStatus.SUPERSEDED:
                continue
            updated = older.model_copy(
                update={
                    "status": MessageStatus.SUPERSEDED,
                    "superseded_by": revision.revision,
                    "updated_at": self.bot.app.clock.now(),
                }
            )
            await self.store.put(updated)
            await self._redraw(updated, successor=record)

    async def _approved(self, change: PlanningChange) -> None:
        mode = change.after.approval_mode
        note = MODE_WORDS[mode] if mode is not None and mode is not ApprovalMode.NORMAL else None
        record = await self._record_outcome(change, note=note)
        revision = change.revision
        if record is None or revision is None:
            return
        embed = render_progress(
            revision,
            change.after.steps,
            approved_by=change.after.approved_by_name,
            mode=mode,
        )
        channel = self._channel_of(record)
        try:
            message = await channel.send(embed=embed, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.warning("could not post the progress of %s", record.agent, exc_info=True)
            return
        await self.store.put(record.model_copy(update={"progress_message_id": message.id}))

    async def _changes_requested(self, change: PlanningChange) -> None:
        feedback = str(change.detail.get("feedback") or "")
        step = change.detail.get("step")
        await self._record_outcome(change, note=feedback)
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
        record = await self.store.get(revision.plan_id, revision.revision)
        if record is not None:
            await self._redraw(record, revision=revision)

    async def _decided(self, change: PlanningChange) -> None:
        await self._record_outcome(change, note=_reason(change))

    async def _cancelled(self, change: PlanningChange) -> None:
        was = change.before.phase
        if was is Phase.SUBMITTED:
            await self._record_outcome(change, note=_reason(change))
        elif was is Phase.EXECUTING:
            await self._finish_progress(change, Finish("cancelled", display_name(change.actor)))
        text = cancelled_text(change.after.agent, display_name(change.actor), was)
        await self._say(change.after.agent, text)

    async def _timed_out(self, change: PlanningChange) -> None:
        which = str(change.detail.get("deadline") or "")
        if change.before.phase is Phase.SUBMITTED:
            await self._record_outcome(change)
        await self._say(
            change.after.agent, timed_out_text(change.after.agent, which, change.before.revision)
        )

    async def _completed(self, change: PlanningChange) -> None:
        await self._finish_progress(change, Finish("completed"))
        if change.revision is not None:
            summary = change.detail.get("summary")
            text = completed_text(change.revision, summary if isinstance(summary, str) else None)
            await self._say(change.after.agent, text)

    async def _step_updated(self, change: PlanningChange) -> None:
        record, revision = await self._progress_of(change.after)
        if record is None or revision is None or record.progress_message_id is None:
            return
        embed = render_progress(
            revision,
            change.after.steps,
            approved_by=change.after.approved_by_name,
            mode=change.after.approval_mode,
            drift=await self._drift_count(change.after),
        )
        message = self._channel_of(record).get_partial_message(record.progress_message_id)
        self._edits.submit(message.id, lambda: message.edit(embed=embed))

    # -- helpers ---------------------------------------------------------------------------

    async def _post_plan(
        self, revision: PlanRevision, state: PlanningState, *, mention: bool, auto: bool = False
    ) -> PlanMessageRecord | None:
        """Post the plan with its buttons; ``mention`` pings the requester to review it, and
        ``auto`` says instead that no review is asked for."""
        agent = await self.bot.app.store.get_agent(revision.agent)
        if agent.channel_id is None:
            return None
        channel = self.bot.get_partial_messageable(
            agent.channel_id, guild_id=agent.guild_id or self._guild_of(agent.channel_id)
        )
        requester = state.requested_by_name
        needed = (await self.bot.app.settings.plan_mode_for(revision.agent)).approvals
        rendered = render_plan(
            revision,
            requested_by=requester,
            changes=await self.changes_of(revision),
            votes=f"👍 **Approvals 0 of {needed}**" if needed > 1 and not auto else None,
        )
        user_id = state.requested_by if mention else None
        pinged = int(user_id) if user_id is not None and user_id.isdigit() else None
        content = (
            auto_approved_text(revision.agent, revision.revision)
            if auto
            else review_request_text(
                revision.agent, revision.revision, f"<@{pinged}>" if pinged else None
            )
        )
        allowed = (
            discord.AllowedMentions(users=[discord.Object(pinged)], roles=False, everyone=False)
            if pinged
            else NO_MENTIONS
        )
        try:
            message = await channel.send(
                content,
                **_plan_payload(rendered),
                view=plan_buttons(revision.plan_id, revision.revision),
                allowed_mentions=allowed,
            )
        except discord.HTTPException as exc:
            log.warning(
                "could not post plan v%s of %s", revision.revision, agent.name, exc_info=True
            )
            fallback = await _post_plan_as_file(channel, revision, rendered, content, allowed, exc)
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
            )
        )
        return await self.store.put(record)

    async def _record_outcome(
        self, change: PlanningChange, *, note: str | None = None
    ) -> PlanMessageRecord | None:
        revision = change.revision
        if revision is None:
            return None
        record = await self.store.get(revision.plan_id, revision.revision)
        if record is None:
            return None
        return await self._mark_outcome(
            record, change.action, change.actor, self.bot.app.clock.now(), note, revision
        )

    async def _mark_outcome(
        self,
        record: PlanMessageRecord,
        action: str,
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
        if await self._redraw(updated, revision=revision):
            return updated
        # The decision stands but the message still shows live buttons. Keep the record
        # pending so the next start settles it again, and say in the channel what happened.
        unsettled = updated.model_copy(update={"status": MessageStatus.PENDING})
        await self.store.put(unsettled)
        who = f" by {updated.outcome_by}" if updated.outcome_by else ""
        try:
            await self._channel_of(record).send(
                f"⚠️ The message of plan v{record.revision} of **{record.agent}** could not "
                f"be updated; its buttons no longer apply (the plan was {action}{who}).",
                allowed_mentions=NO_MENTIONS,
            )
        except discord.HTTPException:
            log.warning("could not report a stale plan message", exc_info=True)
        return unsettled

    async def _redraw(
        self,
        record: PlanMessageRecord,
        *,
        revision: PlanRevision | None = None,
        successor: PlanMessageRecord | None = None,
    ) -> bool:
        """Edit a plan message to what the record says: outcome, supersession, buttons off.
        False when Discord refused the edit, so the message may still show live buttons."""
        revision = revision or await self.bot.app.store.get_revision(
            record.plan_id, record.revision
        )
        if revision is None:
            return True
        rendered = self._render(
            record,
            revision,
            successor,
            await self.changes_of(revision),
            await self._votes_line(record),
        )
        waiting = record.status is MessageStatus.PENDING
        message = self._channel_of(record).get_partial_message(record.message_id)
        try:
            await message.edit(
                embeds=rendered.embeds,
                view=plan_buttons(record.plan_id, record.revision, disabled=not waiting),
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

    async def _drift_count(self, state: PlanningState) -> int:
        """Calls outside the approved plan so far, from the audit log."""
        entries = await self.bot.app.store.list_audit(state.agent, limit=500)
        return sum(
            1
            for entry in entries
            if entry.action == "drift"
            and entry.plan_id == state.plan_id
            and entry.revision == state.revision
        )

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
        )

    async def _progress_of(
        self, state: PlanningState
    ) -> tuple[PlanMessageRecord | None, PlanRevision | None]:
        if state.plan_id is None or state.revision == 0:
            return None, None
        record = await self.store.get(state.plan_id, state.revision)
        revision = await self.bot.app.store.get_revision(state.plan_id, state.revision)
        return record, revision

    async def _finish_progress(self, change: PlanningChange, finish: Finish) -> None:
        record, revision = await self._progress_of(change.before)
        if record is None or revision is None or record.progress_message_id is None:
            return
        embed = render_progress(
            revision,
            change.before.steps,
            approved_by=change.before.approved_by_name,
            mode=change.before.approval_mode,
            finish=finish,
            drift=await self._drift_count(change.before),
        )
        message = self._channel_of(record).get_partial_message(record.progress_message_id)
        self._edits.submit(message.id, lambda: message.edit(embed=embed))
        await self._edits.flush(message.id)

    async def _settle(self, record: PlanMessageRecord) -> None:
        """A message still offering a decision on a revision the audit log says was decided,
        timed out or cancelled (the process stopped between the commit and the edit, or the
        operator decided from the command line): record the outcome and turn its buttons off.
        """
        decision = await self.bot.app.store.find_decision(record.plan_id, record.revision)
        if decision is None:
            return
        await self._mark_outcome(
            record,
            decision.action,
            Actor.from_label(decision.actor),
            decision.at,
            _audit_reason(decision.detail),
        )
        log.info("settled plan v%s of %s: %s", record.revision, record.agent, decision.action)

    async def _restore_plan_message(self, state: PlanningState, plan_id: str) -> None:
        record = await self.store.get(plan_id, state.revision)
        if record is not None and await self._exists(record, record.message_id):
            return
        revision = await self.bot.app.store.get_revision(plan_id, state.revision)
        if revision is None:
            return
        reposted = await self._post_plan(revision, state, mention=False)
        if reposted is not None:
            log.info("re-posted plan v%s of %s", revision.revision, revision.agent)

    async def _restore_progress_message(self, state: PlanningState) -> None:
        record, revision = await self._progress_of(state)
        if record is None or revision is None:
            return
        if record.progress_message_id is not None and await self._exists(
            record, record.progress_message_id
        ):
            return
        embed = render_progress(
            revision, state.steps, approved_by=state.approved_by_name, mode=state.approval_mode
        )
        message = await self._channel_of(record).send(embed=embed, allowed_mentions=NO_MENTIONS)
        await self.store.put(record.model_copy(update={"progress_message_id": message.id}))

    async def _exists(self, record: PlanMessageRecord, message_id: int) -> bool:
        try:
            await self._channel_of(record).fetch_message(message_id)
        except discord.NotFound:
            return False
        return True

    def _channel_of(self, record: PlanMessageRecord) -> discord.PartialMessageable:
        return self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)

    def _guild_of(self, channel_id: int) -> int | None:
        channel = self.bot.get_channel(channel_id)
        guild = getattr(channel, "guild", None)
        return guild.id if isinstance(guild, discord.Guild) else None

    async def _say(self, agent: str, text: str) -> None:
        record = await self.bot.app.store.get_agent(agent)
        if record.channel_id is None:
            return
        channel = self.bot.get_partial_messageable(record.channel_id, guild_id=record.guild_id)
        try:
            await channel.send(text, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.warning("could not tell %s's channel: %s", agent, text, exc_info=True)


async def _post_plan_as_file(
    channel: discord.PartialMessageable,
    revision: PlanRevision,
    rendered: RenderedPlan,
    content: str,
    allowed: discord.AllowedMentions,
    error: discord.HTTPException,
) -> discord.Message | None:
    """The plan message Discord refused, again without its embed: the plan as its markdown
    file under the same buttons. If even that fails, a plain line says the plan exists and
    how to decide on it, so a plan is never waiting for a decision nobody can see."""
    note = (
        f"{content}\n(The plan's summary card could not be shown: {error.text or error}. "
        f"The whole plan is in the attached file.)"
    )
    try:
        return await channel.send(
            note[:2000],
            file=rendered.file(),
            view=plan_buttons(revision.plan_id, revision.revision),
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


def _plan_payload(rendered: RenderedPlan) -> dict[str, Any]:
    payload: dict[str, Any] = {"embeds": rendered.embeds}
    files = [rendered.file()] if rendered.overflow else []
    changes = rendered.changes_file()
    if changes is not None:
        files.append(changes)
    if files:
        payload["files"] = files
    return payload


def _reason(change: PlanningChange) -> str | None:
    return _audit_reason(change.detail)


def _audit_reason(detail: Mapping[str, Any]) -> str | None:
    reason = detail.get("reason")
    return reason if isinstance(reason, str) and reason else None
