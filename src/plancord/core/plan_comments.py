"""Comments on a plan: a member's remark on one step of a revision (or on the plan as a
whole, step 0), shown under its step on the plan message, told to the agent at its next
turn, said addressed by the revision the agent submits next, and resolved by its author or
an approver. ``plan_mode.require_resolved_comments`` makes Approve wait until none is open.

Who may comment is who may instruct the agent; who may resolve is the comment's author or
whoever the approver policy lets decide the plan. Both questions are asked of the core's
authority in one place here (``PlanComments._may``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from plancord.core.access import describe_access
from plancord.core.agents import AgentRecord
from plancord.core.authority import (
    MISPLACED,
    Act,
    Refusal,
    Standing,
    Subject,
    approver_rule,
    describe_approvers,
    judge,
)
from plancord.core.errors import InvalidTransition, NotAuthorised
from plancord.core.planning import Actor, AuditAction, AuditEntry, Phase, PlanningState
from plancord.core.ports import Clock, PlanStore, SettingsProvider

MAX_COMMENT_CHARS = 1000
PLAN_WIDE = 0
"""The step number of a comment on the plan as a whole."""


class PlanComment(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int | None = None
    plan_id: str
    revision: int = Field(ge=1)
    agent: str
    step: int = Field(ge=0)
    body: str = Field(min_length=1, max_length=MAX_COMMENT_CHARS)
    author_id: str
    author_name: str
    created_at: datetime
    told_at: datetime | None = None
    addressed_in: int | None = None
    resolved_by_name: str | None = None
    resolved_at: datetime | None = None

    @property
    def open(self) -> bool:
        return self.resolved_at is None

    @property
    def where(self) -> str:
        return f"step {self.step}" if self.step else "the plan"

    def line(self, limit: int = 200) -> str:
        """``#3 ana on step 2: …`` in at most ``limit`` characters, with its state."""
        body = " ".join(self.body.split())
        state = ""
        if not self.open:
            state = f" (resolved by {self.resolved_by_name})"
        elif self.addressed_in is not None:
            state = f" (addressed in v{self.addressed_in})"
        head = f"#{self.id} {self.author_name} on {self.where} of v{self.revision}: "
        room = max(limit - len(head) - len(state), 10)
        clipped = body if len(body) <= room else body[: room - 1] + "…"
        return head + clipped + state


class AgentLookup(Protocol):
    async def get_agent(self, name: str) -> AgentRecord: ...


class CommentStore(Protocol):
    async def add(self, comment: PlanComment, audit: AuditEntry) -> PlanComment: ...

    async def get(self, comment_id: int) -> PlanComment | None: ...

    async def for_plan(self, plan_id: str) -> list[PlanComment]: ...

    async def resolve(self, comment: PlanComment, by_name: str, audit: AuditEntry) -> bool: ...

    async def take_untold(self, plan_id: str, at: datetime) -> list[PlanComment]: ...

    async def mark_addressed(
        self, plan_id: str, ids: Sequence[int], revision: int
    ) -> list[int]: ...


def told_text(comments: Sequence[PlanComment]) -> str:
    """What the agent reads of comments it has not been told yet (a host message)."""
    lines = [c.line(1200) for c in comments]
    return (
        "[plancord] New comments on your plan:\n"
        + "\n".join(f"- {line}" for line in lines)
        + "\nWhen you submit the next revision, list the ids of the comments it addresses "
        "in submit_plan's addressed_comments."
    )


class PlanComments:
    """Adding, resolving and reading a plan's comments, each change audited with it."""

    def __init__(
        self,
        comments: CommentStore,
        store: PlanStore,
        agents: AgentLookup,
        settings: SettingsProvider,
        clock: Clock,
    ) -> None:
        self._comments = comments
        self._store = store
        self._agents = agents
        self._settings = settings
        self._clock = clock

    async def comment(self, agent: str, actor: Actor, step: int, body: str) -> PlanComment:
        """``actor``'s comment on ``step`` (0: the plan) of the agent's current revision."""
        body = body.strip()
        if not body:
            raise InvalidTransition("submitted", "comment", "Write the comment first.")
        if len(body) > MAX_COMMENT_CHARS:
            raise InvalidTransition(
                "submitted", "comment", f"A comment is at most {MAX_COMMENT_CHARS} characters."
            )
        state = await self._store.load_state(agent)
        if state.phase is not Phase.SUBMITTED or state.plan_id is None:
            raise InvalidTransition(
                state.phase.value,
                "comment",
                "There is no plan waiting for a decision to comment on.",
            )
        revision = await self._store.get_revision(state.plan_id, state.revision)
        if revision is None:
            raise InvalidTransition(state.phase.value, "comment", "There is no plan to comment on.")
        if not 0 <= step <= len(revision.plan.steps):
            raise InvalidTransition(
                "submitted",
                "comment",
                f"Plan v{revision.revision} has steps 1 to {len(revision.plan.steps)}; "
                f"there is no step {step} (0 comments on the whole plan).",
            )
        await self._may(agent, actor, resolving=None)
        now = self._clock.now()
        comment = PlanComment(
            plan_id=revision.plan_id,
            revision=revision.revision,
            agent=agent,
            step=step,
            body=body,
            author_id=actor.id,
            author_name=actor.name,
            created_at=now,
        )
        audit = AuditEntry(
            at=now,
            agent=agent,
            actor=actor.label,
            action=AuditAction.COMMENTED,
            plan_id=revision.plan_id,
            revision=revision.revision,
            detail={"step": step, "text": body[:200]},
        )
        return await self._comments.add(comment, audit)

    async def resolve(self, agent: str, comment_id: int, actor: Actor) -> PlanComment:
        comment = await self._comments.get(comment_id)
        if comment is None or comment.agent != agent:
            raise InvalidTransition("-", "resolve", f"There is no comment #{comment_id} here.")
        if not comment.open:
            raise InvalidTransition(
                "-", "resolve", f"Comment #{comment_id} was resolved by {comment.resolved_by_name}."
            )
        await self._may(agent, actor, resolving=comment)
        audit = AuditEntry(
            at=self._clock.now(),
            agent=agent,
            actor=actor.label,
            action=AuditAction.COMMENT_RESOLVED,
            plan_id=comment.plan_id,
            revision=comment.revision,
            detail={"comment": comment_id},
        )
        if not await self._comments.resolve(comment, actor.name, audit):
            raise InvalidTransition("-", "resolve", f"Comment #{comment_id} was resolved already.")
        return comment.model_copy(update={"resolved_by_name": actor.name})

    async def for_plan(self, plan_id: str) -> list[PlanComment]:
        return await self._comments.for_plan(plan_id)

    async def take_untold(self, agent: str) -> list[PlanComment]:
        """The comments on the agent's current plan it has not been told yet, now marked
        told (they reach the agent with the turn that asks for them)."""
        state = await self._store.load_state(agent)
        if state.plan_id is None:
            return []
        return await self._comments.take_untold(state.plan_id, self._clock.now())

    async def addressed(self, plan_id: str, ids: Sequence[int], revision: int) -> list[int]:
        """Record that ``revision`` addresses the comments ``ids`` (those of this plan)."""
        return await self._comments.mark_addressed(plan_id, ids, revision)

    async def _may(self, agent: str, actor: Actor, *, resolving: PlanComment | None) -> None:
        """The one place comments ask the authority: commenting is instructing the agent;
        resolving is the comment's author's, or whoever may decide the plan."""
        settings = await self._settings.plan_mode_for(agent)
        record = await self._agents.get_agent(agent)
        # Where first (``core.places``), as for every act: the authority's instruct answer.
        standing = Standing(PlanningState(agent=agent), settings, record)
        verdict = judge(actor, Subject.AGENT, Act.INSTRUCT, standing)
        if isinstance(verdict, Refusal) and verdict.rule == MISPLACED:
            raise NotAuthorised(verdict.text)
        if isinstance(verdict, Refusal) and resolving is None:
            raise NotAuthorised(
                f"Only {describe_access(record, settings.access)} can comment on the plans "
                f"of **{agent}**."
            )
        if resolving is None:
            return
        if resolving.author_id == actor.id:
            return
        state = await self._store.load_state(agent)
        if approver_rule(actor, state, settings) is not None:
            raise NotAuthorised(
                f"Only its author ({resolving.author_name}) or "
                f"{describe_approvers(state, settings)} can resolve comment #{resolving.id}."
            )


@dataclass(frozen=True, slots=True)
class CommentSummary:
    """What a plan message shows of its comments: under each step of the revision shown, a
    count and the latest (``by_step``); and a line for the comments on the plan as a whole
    or on earlier revisions (``plan_line``)."""

    by_step: Mapping[int, str]
    plan_line: str = ""
    markdown: str = ""
    """Every comment in full, for the plan's file (after ``plan_text.COMMENTS_MARK``)."""

    @property
    def empty(self) -> bool:
        return not self.by_step and not self.plan_line


def summarise(comments: Sequence[PlanComment], revision: int, limit: int = 160) -> CommentSummary:
    """The summary of ``comments`` for the message of ``revision``."""
    steps: dict[int, list[PlanComment]] = {}
    elsewhere: list[PlanComment] = []
    for comment in comments:
        if comment.revision == revision and comment.step:
            steps.setdefault(comment.step, []).append(comment)
        elif comment.open:
            elsewhere.append(comment)
    by_step = {step: _count_line(found, limit) for step, found in steps.items()}
    plan_line = _count_line(elsewhere, limit) if elsewhere else ""
    markdown = "\n".join(f"- {c.line(MAX_COMMENT_CHARS + 200)}" for c in comments)
    return CommentSummary(by_step, plan_line, markdown)


def _count_line(comments: Sequence[PlanComment], limit: int) -> str:
    still = sum(c.open for c in comments)
    head = f"💬 {len(comments)} comment{'s' if len(comments) != 1 else ''}"
    if still != len(comments):
        head += f" ({still} open)"
    return f"{head} · latest {comments[-1].line(limit)}"
