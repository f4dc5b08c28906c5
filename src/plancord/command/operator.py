"""Plan mode and agents from a shell: for admins and scripts when Discord is not at hand.

``plancord plan …`` and ``plancord agents list`` call the same ``PlanningService`` the Discord
buttons call, so the transition table, the revision binding and the audit log apply
unchanged; every decision is audited with the actor ``operator``. Only what that needs is
built: the database (never created or migrated here), the store, the service with the stored
per-agent settings and no notifier. There is no Discord client and no model here.

A running bot is another process: it hears an operator's decision through the change feed
(``storage.changes``) within a fraction of a second, redraws the card and, on a cancel,
stops the agent's running turn before its next call. A cancel that ends an execution ends
its record and opens its result here, as the bot would; the bot posts the completion card
of a result waiting without one. The bot resumes an agent waiting for approval only when
the approval happens in its own process, so after ``plancord plan approve`` the agent
continues with its next turn, started by a message in its channel.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from plancord.agent.call_log import CallLog
from plancord.agent.execution.results import ExecutionResults
from plancord.agent.execution.steps import StepKeeper
from plancord.agent.home import AgentHomes
from plancord.agent.remembered_rules import RememberedRules
from plancord.app import PlanLifecycle, core_services
from plancord.config import Config
from plancord.core.ask_authority import AskAuthority
from plancord.core.asks.service import AskService
from plancord.core.errors import InvalidTransition, PlancordError, PlanValidationError
from plancord.core.instructions import Instructions, Refused
from plancord.core.plan_comments import PlanComments
from plancord.core.plan_diff import revision_changes
from plancord.core.plan_edits import form_problem
from plancord.core.plan_text import parse_plan_text
from plancord.core.planning import (
    Actor,
    ApprovalMode,
    EntrySource,
    Phase,
    PlanEvent,
    PlanningState,
    PlanRef,
    next_phase,
)
from plancord.core.ports import SystemClock
from plancord.core.review_gate import ReviewHeld
from plancord.core.schedules import Schedule, ScheduleBook, ScheduleState
from plancord.core.service import PlanningService, PlanningStatus
from plancord.storage.engines import open_database
from plancord.storage.executions import ExecutionStore
from plancord.storage.migrations import discover, schema_version
from plancord.storage.pending_asks import PendingAskStore
from plancord.storage.plan_comments import PlanCommentStore
from plancord.storage.schedules import SqlScheduleStore
from plancord.storage.store import SqlStore

__all__ = [
    "AgentRow",
    "OperatorError",
    "OperatorServices",
    "agents_json",
    "agents_text",
    "list_agents",
    "open_services",
    "plan_approve",
    "plan_cancel",
    "plan_enter",
    "plan_reject",
    "schedule_change",
    "schedules_json",
    "schedules_text",
    "status_json",
    "status_text",
]

OPERATOR = Actor.operator()

RESUME_NOTE = (
    "note: a running bot sees this on the agent's next turn; it does not resume the agent by "
    "itself, so post a message in the agent's channel to continue"
)


class OperatorError(PlancordError):
    """The operator command cannot run against this database (missing or at another version)."""


@dataclass(frozen=True, slots=True)
class OperatorServices:
    store: SqlStore
    planning: PlanningService
    results: ExecutionResults
    """The results of executed plans, decided through the completion card's own code."""
    executions: ExecutionStore
    homes: AgentHomes
    schedules: ScheduleBook
    """The agents' schedules, changed as the operator (who may instruct every agent)."""
    asks: AskService
    """What the agents wait on a human for, answered through the core's one service."""
    call_rules: RememberedRules | None = None
    """The operator's and members' remembered rules for tool calls."""
    call_log: CallLog | None = None
    """Every tool call's decision record."""


@dataclass(frozen=True, slots=True)
class AgentRow:
    name: str
    channel_id: int | None
    model: str
    phase: Phase
    role: str | None


@asynccontextmanager
async def open_services(config: Config) -> AsyncIterator[OperatorServices]:
    """The store and planning service over the bot's existing, fully migrated database."""
    path = config.database_label
    file = config.database_path
    if file is not None and not file.is_file():
        raise OperatorError(
            f"no database at {path}; run plancord migrate or start the bot first "
            "(or pass the bot's --config)"
        )
    migrations = discover()
    latest = migrations[-1].version if migrations else 0
    db = await open_database(config.database_target, migrate=False)
    try:
        version = await schema_version(db)
        if version < latest:
            raise OperatorError(
                f"the database {path} is at schema version {version}, older than this "
                f"plancord ({latest}); run plancord migrate first"
            )
        if version > latest:
            raise OperatorError(
                f"the database {path} is at schema version {version}, newer than this "
                f"plancord knows (up to {latest}); use the plancord that runs the bot"
            )
        clock = SystemClock()
        core = core_services(config, db, clock)
        results = ExecutionResults(
            executions=core.executions,
            store=core.store,
            plan_settings=core.settings,
            members=None,
            clock=clock,
            homes=core.homes,
            lease=core.lease,
        )
        # An execution ended here (a cancel, a rejected amendment) ends its record and opens
        # its result as in the bot; the bot posts the card it finds waiting without one.
        steps = StepKeeper(executions=core.executions, notifier=None, clock=clock, homes=core.homes)
        PlanLifecycle(steps=steps, results=results).listen(core.planning)
        try:
            schedules = ScheduleBook(
                SqlScheduleStore(db), clock, core.settings, core.store.get_agent
            )
            yield OperatorServices(
                core.store,
                core.planning,
                results,
                core.executions,
                core.homes,
                schedules,
                AskService(
                    PendingAskStore(db), AskAuthority(core.store, core.settings, clock), clock
                ),
                core.call_rules,
                core.call_log,
            )
        finally:
            await results.close()
            await core.lease.close()
    finally:
        await db.close()


# -- plan ---------------------------------------------------------------------------------


async def plan_status(services: OperatorServices, agent: str) -> PlanningStatus:
    return await services.planning.status(agent)


async def plan_enter(
    services: OperatorServices, agent: str, task: str | None, reason: str | None
) -> str:
    # Who may instruct the agent is asked here as on every other path (a message, /plan
    # start): the operator may instruct every agent, so this refuses only what it refuses.
    planning = services.planning
    instructions = Instructions(services.store, planning.settings, planning.clock)
    verdict = await instructions.judge(await services.store.get_agent(agent), OPERATOR)
    if isinstance(verdict, Refused):
        raise OperatorError(f"{verdict.refusal.text}; nothing changed")
    outcome = await services.planning.enter(
        agent, source=EntrySource.OPERATOR, actor=OPERATOR, task=task, reason=reason
    )
    state = outcome.state
    if not outcome.entered:
        return f"agent {agent} is already in plan mode ({state.phase.value}); nothing changed"
    return (
        f"agent {agent} entered plan mode (gathering), plan {state.plan_id}\n"
        "note: a running bot starts exploring on the agent's next turn; post the task in the "
        "agent's channel"
    )


async def _decision_ref(
    services: OperatorServices, agent: str, revision: int | None, event: PlanEvent
) -> PlanRef:
    """The revision to decide on: the current one, bound to its sha, or exactly ``revision``."""
    state = await services.store.load_state(agent)
    if state.plan_id is None or state.revision == 0:
        next_phase(state.phase, event)
        raise InvalidTransition(
            state.phase.value, event.value, f"Agent {agent} has no submitted plan to decide on."
        )
    if revision is None:
        return PlanRef(
            agent=agent, plan_id=state.plan_id, revision=state.revision, sha256=state.plan_sha
        )
    return PlanRef(agent=agent, plan_id=state.plan_id, revision=revision)


async def plan_diff(
    services: OperatorServices, agent: str, first: int | None, second: int | None
) -> str:
    """The full diff between two revisions of the agent's plan (default: the last two); the
    current plan, else the last one it had (a plan that completed, was cancelled or rejected)."""
    latest = await _latest_plan(services, agent)
    if latest is None or latest[1] < 2:
        return f"agent {agent} has no plan with two revisions to compare"
    plan_id, revision = latest
    newer = second or revision
    older = first or newer - 1
    changes = await revision_changes(services.store, plan_id, older, newer)
    if changes is None:
        raise OperatorError(
            f"give two revisions of plan {plan_id}, the older first, between 1 and {revision}"
        )
    return changes.to_markdown().rstrip("\n")


async def _latest_plan(services: OperatorServices, agent: str) -> tuple[str, int] | None:
    """``(plan id, newest revision)`` of the agent's current plan, else of the last plan its
    audit log names; None when it never had one."""
    state = await services.store.load_state(agent)
    if state.plan_id is not None and state.revision > 0:
        return state.plan_id, state.revision
    for entry in reversed(await services.store.list_audit(agent)):
        if entry.plan_id is not None:
            revisions = await services.store.list_revisions(entry.plan_id)
            return (entry.plan_id, revisions[-1].revision) if revisions else None
    return None


async def plan_approve(
    services: OperatorServices,
    agent: str,
    revision: int | None,
    mode: ApprovalMode,
    *,
    acknowledged_blockers: int | None = None,
) -> str:
    ref = await _decision_ref(services, agent, revision, PlanEvent.APPROVE)
    try:
        state = await services.planning.approve(
            ref, OPERATOR, mode, acknowledged_blockers=acknowledged_blockers
        )
    except ReviewHeld as held:
        if held.hold.acknowledgement is None:
            raise
        raise OperatorError(
            f"{held} To approve anyway, add --despite-blockers {held.blockers}."
        ) from None
    sha8 = (state.plan_sha or "")[:8]
    return (
        f"approved plan v{ref.revision} ({sha8}) of agent {agent}, mode {mode.value}; "
        f"audited as operator\n{RESUME_NOTE}"
    )


async def plan_reject(
    services: OperatorServices, agent: str, revision: int | None, reason: str | None
) -> str:
    ref = await _decision_ref(services, agent, revision, PlanEvent.REJECT)
    revision_record = await services.store.get_revision(ref.plan_id, ref.revision)
    await services.planning.reject(ref, OPERATOR, reason)
    sha8 = revision_record.sha8 if revision_record is not None else "?"
    return f"rejected plan v{ref.revision} ({sha8}) of agent {agent}; planning ended"


async def plan_edit(services: OperatorServices, agent: str, path: str, text: str) -> str:
    """The edited plan file ``text`` (read from ``path``) as the next revision of the
    waiting plan."""
    status = await services.planning.status(agent)
    if status.revision is None:
        raise OperatorError(f"agent {agent} has no plan to edit")
    try:
        edited = await services.planning.edit(
            status.revision.exact_ref, parse_plan_text(text), OPERATOR
        )
    except PlanValidationError as exc:
        raise OperatorError(f"{path}: {form_problem(exc)}; nothing changed") from None
    return (
        f"edited plan v{status.revision.revision} of agent {agent} into v{edited.revision} "
        f"({edited.sha8}); it waits for approval"
    )


async def plan_comment(services: OperatorServices, agent: str, step: int, text: str) -> str:
    planning = services.planning
    comments = PlanComments(
        PlanCommentStore(services.store.db),
        services.store,
        services.store,
        planning.settings,
        planning.clock,
    )
    kept = await comments.comment(agent, OPERATOR, step, text)
    return f"comment #{kept.id} on {kept.where} of plan v{kept.revision} of agent {agent} kept"


async def plan_cancel(services: OperatorServices, agent: str, reason: str | None) -> str:
    before = await services.store.load_state(agent)
    await services.planning.cancel(agent, OPERATOR, reason)
    return f"cancelled plan mode of agent {agent} (was {before.phase.value})"


def _when(value: datetime | None) -> str:
    if value is None:
        return "-"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def status_text(status: PlanningStatus) -> str:
    state, revision = status.state, status.revision
    lines = [f"agent {state.agent}: {state.phase.value}"]
    if state.phase is Phase.INACTIVE:
        return lines[0] + " (not in plan mode)"
    if state.task:
        lines.append(f"task: {state.task}")
    entered = f"entered: {_when(state.entered_at)}"
    if state.entry_source is not None:
        entered += f" by {state.entry_source.value}"
    if state.entry_reason:
        entered += f" ({state.entry_reason})"
    lines.append(entered)
    if state.requested_by_name:
        lines.append(f"requested by: {state.requested_by_name}")
    lines.append(f"plan id: {state.plan_id}")
    if revision is not None:
        submitted = _when(revision.submitted_at)
        lines.append(f"plan: v{revision.revision} · {revision.sha8} · submitted {submitted}")
    if state.phase is Phase.GATHERING:
        lines.append(f"idle deadline: {_when(state.idle_deadline)}")
    if state.phase is Phase.SUBMITTED and revision is not None:
        lines.append(f"waiting for a decision until {_when(state.approval_deadline)}")
        lines.append(
            f"approve: plancord plan approve --agent {state.agent} --revision {revision.revision}"
        )
    if state.phase is Phase.EXECUTING:
        mode = state.approval_mode.value if state.approval_mode else "normal"
        lines.append(
            f"approved by {state.approved_by_name or state.approved_by} "
            f"at {_when(state.approved_at)}, mode {mode}"
        )
        for number, step in enumerate(state.steps, start=1):
            note = f": {step.note}" if step.note else ""
            lines.append(f"  step {number}: {step.status.value}{note}")
    if revision is not None and state.phase is not Phase.EXECUTING:
        lines.extend(["", revision.markdown.rstrip()])
    return "\n".join(lines)


def status_json(status: PlanningStatus) -> dict[str, Any]:
    return {
        "state": status.state.model_dump(mode="json"),
        "plan": status.revision.model_dump(mode="json") if status.revision else None,
    }


# -- agents -------------------------------------------------------------------------------


async def list_agents(services: OperatorServices) -> list[AgentRow]:
    states: dict[str, PlanningState] = {s.agent: s for s in await services.store.list_states()}
    return [
        AgentRow(
            name=record.name,
            channel_id=record.channel_id,
            model=record.model,
            phase=states[record.name].phase if record.name in states else Phase.INACTIVE,
            role=record.role,
        )
        for record in await services.store.list_agents()
    ]


def agents_text(rows: Sequence[AgentRow]) -> str:
    if not rows:
        return "no agents"
    table = [("NAME", "CHANNEL", "MODEL", "PHASE")] + [
        (row.name, str(row.channel_id) if row.channel_id else "-", row.model, row.phase.value)
        for row in rows
    ]
    widths = [max(len(line[column]) for line in table) for column in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line[:3], widths, strict=True))
        + "  "
        + line[3]
        for line in table
    )


def agents_json(rows: Sequence[AgentRow]) -> list[dict[str, Any]]:
    return [
        {
            "name": row.name,
            "channel_id": row.channel_id,
            "model": row.model,
            "phase": row.phase.value,
            "role": row.role,
        }
        for row in rows
    ]


# -- schedules ------------------------------------------------------------------------------


async def schedule_change(services: OperatorServices, action: str, schedule_id: str) -> str:
    """``pause``, ``resume`` or ``delete`` a schedule as the operator (audited as such); a
    running bot sees it at its next pass over the schedules (within a minute)."""
    book = services.schedules
    changes = {"pause": book.pause, "resume": book.resume, "delete": book.delete}
    changed = await changes[action](schedule_id, OPERATOR)
    done = {"pause": "paused", "resume": "resumed", "delete": "deleted"}[action]
    return f"{done} schedule {changed.id} of {changed.agent} ({changed.words})"


def schedules_text(schedules: Sequence[Schedule]) -> str:
    if not schedules:
        return "no schedules"
    return "\n".join(
        f"{s.id}  {s.agent}  {s.state.value}  "
        f"{'-' if s.state is ScheduleState.PAUSED else _when(s.next_run_at)}  "
        f"{s.words}  {' '.join(s.task.split())[:80]}"
        for s in schedules
    )


def schedules_json(schedules: Sequence[Schedule]) -> list[dict[str, Any]]:
    return [{**s.model_dump(mode="json"), "words": s.words} for s in schedules]
