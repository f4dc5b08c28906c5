"""The store: agents, planning state, plan revisions and the audit log, on either engine.

It implements ``plancord.core.ports.PlanStore`` (approval votes through
``storage.approval_votes``) and returns pydantic models, never rows. A
transition is one transaction: the state row (guarded by its version column), the audit row
and, on submit, the plan revision are written together or not at all.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import datetime
from typing import Any

from plancord.core.agents import AgentRecord
from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.changes import ChangeKind, planning_payload
from plancord.core.errors import AgentNotFound, PlancordError, VersionConflict
from plancord.core.planning import (
    DECISION_ACTIONS,
    AuditAction,
    AuditEntry,
    PlanningState,
    PlanRevision,
)
from plancord.core.ports import Transition
from plancord.storage.approval_votes import ApprovalVoteStore
from plancord.storage.backend import Backend, Tx
from plancord.storage.changes import append_change
from plancord.storage.codec import (
    INSERT_AUDIT,
    UPDATE_STATE,
    agent_from_row,
    audit_from_row,
    audit_values,
    parse_ts,
    revision_from_row,
    state_from_row,
    state_values,
    ts,
)
from plancord.storage.plan_comments import PlanCommentStore
from plancord.storage.plan_reviews import ReviewKind, mark_started
from plancord.storage.start_intents import record_start

__all__ = ["AgentExists", "SqlStore", "parse_ts", "ts"]


class AgentExists(PlancordError):
    def __init__(self, name: str, field: str = "name") -> None:
        self.name = name
        if field == "channel":
            super().__init__(f"This channel is already bound to another agent ({name}).")
        else:
            super().__init__(f"An agent named {name!r} already exists.")


class SqlStore:
    """``PlanStore`` and agent registry over one database (SQLite or PostgreSQL)."""

    REVISION_CACHE = 512

    def __init__(self, db: Backend) -> None:
        self.db = db
        self._votes = ApprovalVoteStore(db)
        self._agents: dict[str, AgentRecord] = {}
        # Revisions never change once written: the newest are kept, so a decision or a
        # completion does not read back and parse the plan that was just submitted.
        self._revisions: OrderedDict[tuple[str, int], PlanRevision] = OrderedDict()

    def _remember(self, revision: PlanRevision) -> PlanRevision:
        key = (revision.plan_id, revision.revision)
        self._revisions[key] = revision
        self._revisions.move_to_end(key)
        while len(self._revisions) > self.REVISION_CACHE:
            self._revisions.popitem(last=False)
        return revision

    # -- agents ----------------------------------------------------------------------------

    async def create_agent(
        self, agent: AgentRecord, audit: AuditEntry | None = None
    ) -> AgentRecord:
        """Insert the agent and its inactive planning state in one transaction."""
        if await self.db.fetchone("SELECT 1 FROM agents WHERE name = ?", (agent.name,)):
            raise AgentExists(agent.name)
        if agent.channel_id is not None:
            bound = await self.db.fetchone(
                "SELECT name FROM agents WHERE channel_id = ?", (agent.channel_id,)
            )
            if bound:
                raise AgentExists(bound["name"], "channel")
        values = (
            agent.name,
            agent.model,
            agent.channel_id,
            agent.guild_id,
            agent.system_prompt,
            json.dumps(agent.permission_profile),
            json.dumps(agent.plan_mode_overrides),
            agent.role,
            ts(agent.created_at),
            agent.created_by,
        )
        audited = audit_values(audit) if audit is not None else None
        integrity_errors = self.db.integrity_errors

        def insert(conn: Tx) -> None:
            try:
                conn.execute(
                    "INSERT INTO agents (name, model, channel_id, guild_id, system_prompt, "
                    "permission_profile, plan_mode_overrides, role, created_at, created_by) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    values,
                )
            except integrity_errors as exc:
                raise AgentExists(agent.name) from exc
            conn.execute("INSERT INTO planning_state (agent) VALUES (?)", (agent.name,))
            if audited is not None:
                conn.execute(INSERT_AUDIT, audited)

        await self.db.write(insert)
        self._agents[agent.name] = agent
        return agent

    async def get_agent(self, name: str) -> AgentRecord:
        """The agent's record; cached, since every tool call and transition reads it and
        agents change only through this store."""
        cached = self._agents.get(name)
        if cached is not None:
            return cached
        row = await self.db.fetchone("SELECT * FROM agents WHERE name = ?", (name,))
        if row is None:
            raise AgentNotFound(name)
        record = self._agents[name] = agent_from_row(row)
        return record

    async def find_agent_by_channel(self, channel_id: int) -> AgentRecord | None:
        """The channel's agent: from the cache when it holds it (every interaction asks)."""
        for cached in self._agents.values():
            if cached.channel_id == channel_id:
                return cached
        row = await self.db.fetchone("SELECT * FROM agents WHERE channel_id = ?", (channel_id,))
        if row is None:
            return None
        record = self._agents[row["name"]] = agent_from_row(row)
        return record

    async def list_agents(self) -> list[AgentRecord]:
        rows = await self.db.fetchall("SELECT * FROM agents ORDER BY name")
        return [agent_from_row(r) for r in rows]

    async def update_agent(self, agent: AgentRecord) -> AgentRecord:
        values = (
            agent.model,
            agent.channel_id,
            agent.guild_id,
            agent.system_prompt,
            json.dumps(agent.permission_profile),
            json.dumps(agent.plan_mode_overrides),
            agent.role,
            agent.name,
        )

        def update(conn: Tx) -> None:
            cursor = conn.execute(
                "UPDATE agents SET model = ?, channel_id = ?, guild_id = ?, system_prompt = ?, "
                "permission_profile = ?, plan_mode_overrides = ?, role = ? WHERE name = ?",
                values,
            )
            if cursor.rowcount == 0:
                raise AgentNotFound(agent.name)

        await self.db.write(update)
        self._agents[agent.name] = agent
        return agent

    async def delete_agent(self, name: str, audit: AuditEntry | None = None) -> None:
        self._agents.pop(name, None)
        audited = audit_values(audit) if audit is not None else None

        def delete(conn: Tx) -> None:
            cursor = conn.execute("DELETE FROM agents WHERE name = ?", (name,))
            if cursor.rowcount == 0:
                raise AgentNotFound(name)
            if audited is not None:
                conn.execute(INSERT_AUDIT, audited)

        await self.db.write(delete)

    # -- planning state (PlanStore) --------------------------------------------------------

    async def load_state(self, agent: str) -> PlanningState:
        row = await self.db.fetchone("SELECT * FROM planning_state WHERE agent = ?", (agent,))
        if row is None:
            raise AgentNotFound(agent)
        return state_from_row(row)

    async def list_states(self) -> list[PlanningState]:
        rows = await self.db.fetchall("SELECT * FROM planning_state ORDER BY agent")
        return [state_from_row(r) for r in rows]

    async def save_transition(self, transition: Transition) -> PlanningState:
        state = transition.state
        values = (*state_values(state), state.agent, transition.expected_version)
        rev = transition.revision
        revision_values = (
            (
                rev.plan_id,
                rev.revision,
                rev.agent,
                rev.plan.model_dump_json(),
                rev.markdown,
                rev.sha256,
                ts(rev.submitted_at),
                rev.author.value,
                rev.tree,
                rev.edited_by,
                rev.edited_by_name,
            )
            if rev is not None
            else None
        )
        audit = audit_values(transition.audit)
        change = changed(transition)
        origin, at = self.db.origin, transition.audit.at
        subject = transition.audit.plan_id or ""

        def save(conn: Tx) -> None:
            if conn.execute(UPDATE_STATE, values).rowcount != 1:
                exists = conn.execute(
                    "SELECT 1 FROM planning_state WHERE agent = ?", (state.agent,)
                ).fetchone()
                if exists is None:
                    raise AgentNotFound(state.agent)
                raise VersionConflict(state.agent, transition.expected_version)
            if revision_values is not None:
                conn.execute(
                    "INSERT INTO plan_revisions (plan_id, revision, agent, plan_json, markdown, "
                    "sha256, submitted_at, author, tree, edited_by, edited_by_name) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    revision_values,
                )
            conn.execute(INSERT_AUDIT, audit)
            if rev is not None and transition.review_hold is not None:
                mark_started(
                    conn,
                    rev.plan_id,
                    rev.revision,
                    ReviewKind.PLAN,
                    rev.submitted_at,
                    transition.review_hold,
                )
            if transition.start is not None:
                record_start(conn, transition.start, transition.audit.at)
            if change is not None:
                append_change(conn, origin, ChangeKind.PLAN, state.agent, subject, change, at)

        await self.db.write(save)
        if rev is not None:
            self._remember(rev)
        return state

    async def extend_idle_deadline(self, agent: str, deadline: datetime) -> bool:
        moved = await self.db.execute(
            "UPDATE planning_state SET idle_deadline = ? WHERE agent = ? AND phase = 'gathering'",
            (ts(deadline), agent),
        )
        return moved == 1

    async def due_states(self, now: datetime) -> list[PlanningState]:
        at = ts(now)
        rows = await self.db.fetchall(
            "SELECT * FROM planning_state WHERE approval_deadline <= ? OR idle_deadline <= ? "
            "ORDER BY agent",
            (at, at),
        )
        return [state_from_row(r) for r in rows]

    async def next_deadline(self) -> datetime | None:
        row = await self.db.fetchone(
            "SELECT min(d) FROM (SELECT min(approval_deadline) AS d FROM planning_state "
            "UNION ALL SELECT min(idle_deadline) FROM planning_state) AS deadlines"
        )
        return parse_ts(row[0]) if row else None

    # -- revisions and audit ---------------------------------------------------------------

    async def get_revision(self, plan_id: str, revision: int) -> PlanRevision | None:
        cached = self._revisions.get((plan_id, revision))
        if cached is not None:
            return cached
        row = await self.db.fetchone(
            "SELECT * FROM plan_revisions WHERE plan_id = ? AND revision = ?", (plan_id, revision)
        )
        return self._remember(revision_from_row(row)) if row else None

    async def list_revisions(self, plan_id: str) -> list[PlanRevision]:
        rows = await self.db.fetchall(
            "SELECT * FROM plan_revisions WHERE plan_id = ? ORDER BY revision", (plan_id,)
        )
        return [revision_from_row(r) for r in rows]

    async def open_comments(self, plan_id: str) -> int:
        return await PlanCommentStore(self.db).open_count(plan_id)

    async def find_decision(self, plan_id: str, revision: int) -> AuditEntry | None:
        marks = ", ".join("?" for _ in DECISION_ACTIONS)
        row = await self.db.fetchone(
            f"SELECT * FROM audit_log WHERE plan_id = ? AND revision = ? "  # noqa: S608
            f"AND action IN ({marks}) ORDER BY id LIMIT 1",
            (plan_id, revision, *DECISION_ACTIONS),
        )
        return audit_from_row(row) if row else None

    async def list_audit(self, agent: str, limit: int = 100) -> list[AuditEntry]:
        rows = await self.db.fetchall(
            "SELECT * FROM audit_log WHERE agent = ? ORDER BY id DESC LIMIT ?", (agent, limit)
        )
        return [audit_from_row(r) for r in reversed(rows)]

    async def append_audit(self, entry: AuditEntry) -> None:
        await self.db.execute(INSERT_AUDIT, audit_values(entry))

    # -- approval votes (storage.approval_votes) -------------------------------------------

    async def record_vote(self, vote: ApprovalVote, agent: str, audit: AuditEntry) -> VoteWrite:
        return await self._votes.record(vote, agent, audit)

    async def list_votes(self, plan_id: str, revision: int, sha256: str) -> list[ApprovalVote]:
        return await self._votes.for_revision(plan_id, revision, sha256)


def changed(transition: Transition) -> dict[str, Any] | None:
    """What ``transition`` appends to the change feed; None for a bare state save."""
    if transition.before is None or transition.actor is None:
        return None
    audit = transition.audit
    return planning_payload(
        AuditAction(audit.action),
        transition.before,
        transition.state,
        transition.actor,
        audit.detail,
    )
