"""How a running agent hears of planning decisions: an approval resumes it on the plan
(fresh context when the approval asks for it), a request for changes sends it back to
revise, and a rejection, cancellation or timeout ends plan mode, joining a running turn or
waiting in the conversation for the next one."""

from __future__ import annotations

from plancord.agent.conversation_writer import ConversationWriter
from plancord.agent.host_prompts import HOST
from plancord.agent.loop import ToolLoop
from plancord.agent.sessions import AgentSession, Sessions
from plancord.core.plan_answers import answers_text
from plancord.core.plan_diff import diff_plans
from plancord.core.planning import ApprovalMode, AuditAction, RevisionAuthor
from plancord.core.ports import Clock, PlanningChange
from plancord.storage.conversations import ConversationStore
from plancord.storage.plan_answers import PlanAnswerStore
from plancord.storage.store import SqlStore

ENDINGS = (AuditAction.REJECTED, AuditAction.CANCELLED, AuditAction.TIMED_OUT)
"""The decisions that end plan mode: a running turn hears them, and a cancel stops it."""


def ending_text(change: PlanningChange) -> str:
    """What the agent is told of a rejection, a cancel or a timeout."""
    rev = change.revision.revision if change.revision else change.before.revision
    reason = change.detail.get("reason")
    words = {
        "rejected": f"Plan v{rev} was rejected by {change.actor.name}",
        "cancelled": f"Planning was cancelled by {change.actor.name}",
        "timed-out": "Planning timed out with no decision",
    }[change.action]
    text = f"{HOST} {words}" + (f": {reason}" if reason else "") + "."
    return text + " Plan mode has ended; do not carry out the plan."


def join_ending(session: AgentSession, change: PlanningChange) -> bool:
    """A running turn hears an ending (``ENDINGS``), and a cancel stops it before its next
    call, wherever the cancel was made (this process, or another one through the change
    feed); False when no turn runs here."""
    if not session.busy:
        return False
    session.joining.append({"type": "text", "text": ending_text(change)})
    if change.action is AuditAction.CANCELLED:
        session.request_stop()
    return True


class PlanEvents:
    """A planning listener (``plancord.app.PlanLifecycle`` registers it, last) that starts
    the agents' turns."""

    def __init__(
        self,
        *,
        sessions: Sessions,
        loop: ToolLoop,
        writer: ConversationWriter,
        conversations: ConversationStore,
        store: SqlStore,
        clock: Clock,
    ) -> None:
        self._sessions = sessions
        self._loop = loop
        self._writer = writer
        self._conversations = conversations
        self._store = store
        self._clock = clock

    async def planning_changed(self, change: PlanningChange) -> None:
        """Resume or stop the agent when a human decides; record the change in its history."""
        agent = change.after.agent
        session = self._sessions.get(agent)
        rev = change.revision.revision if change.revision else change.before.revision
        who = change.actor.name
        if change.action is AuditAction.SUBMITTED:
            told = await self._edit_text(change)
            if told:
                await self._resume(session, told)
        elif change.action is AuditAction.APPROVED:
            mode = change.after.approval_mode
            text = f"{HOST} Plan v{rev} approved by {who}: you may now modify files."
            if change.detail.get("amends") is not None:
                text = (
                    f"{HOST} Amendment v{rev} approved by {who}: go on executing with its "
                    "steps; steps carried over unchanged keep their progress."
                )
            if mode is ApprovalMode.CONFIRM_EACH_EDIT:
                text += " Every change will ask a human for permission first."
            answered = await self._answers_text(change)
            if answered:
                text += f"\n{answered}"
            if mode is ApprovalMode.FRESH_CONTEXT and not session.busy:
                await self._fresh_context(agent, change)
                text += " The earlier conversation was cleared; the approved plan is below."
            await self._resume(session, text)
        elif change.action is AuditAction.CHANGES_REQUESTED:
            step = change.detail.get("step")
            where = f" (step {step})" if step else ""
            feedback = change.detail.get("feedback", "")
            text = (
                f"{HOST} {who} asked for changes to plan v{rev}{where}: {feedback}\n"
                f"Revise the plan and submit v{rev + 1} with submit_plan."
            )
            await self._resume(session, text)
        elif change.action in ENDINGS and not join_ending(session, change):
            text = ending_text(change)
            await self._writer.add_user_blocks(agent, [{"type": "text", "text": text}])

    async def _edit_text(self, change: PlanningChange) -> str:
        """What the agent is told of a member's direct edit: who, the diff, and that it may
        accept it or answer with a revision of its own; empty for any other submission."""
        revision = change.revision
        if revision is None or revision.author is not RevisionAuthor.HUMAN_EDIT:
            return ""
        number = revision.revision
        older = await self._store.get_revision(revision.plan_id, number - 1)
        diff = (
            diff_plans(older.plan, revision.plan, number - 1, number).to_markdown()
            if older is not None
            else revision.markdown
        )
        return (
            f"{HOST} {revision.edited_by_name or 'A member'} edited your plan directly: "
            f"v{number} (sha {revision.sha8}) now waits for approval instead of v{number - 1}. "
            f"The changes:\n{diff}\nYou are still in plan mode (read-only). If the edit is "
            "right, say so briefly and do not submit. If it is wrong or misses something, "
            f"submit v{number + 1} with submit_plan and say why."
        )

    async def _answers_text(self, change: PlanningChange) -> str:
        """The reviewers' picks for the approved revision's questions with choices."""
        revision = change.revision
        if revision is None or not revision.plan.question_choices:
            return ""
        answers = await PlanAnswerStore(self._store.db).for_revision(
            revision.plan_id, revision.revision
        )
        return answers_text(revision.plan, answers)

    async def _resume(self, session: AgentSession, text: str) -> None:
        session.claim([{"type": "text", "text": text}], self._loop.turn(session))

    async def _fresh_context(self, agent: str, change: PlanningChange) -> None:
        task = change.after.task or (change.revision.plan.summary if change.revision else "")
        opening = {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": f"{HOST} Fresh context for the approved plan. Task: {task}",
                }
            ],
        }
        await self._conversations.restart(agent, [opening], self._clock.now())
