"""The services every entry point builds over one database, each once.

Why this exists: the bot, the operator's shell and the tests all stand on the same store,
settings, planning service, executions store and agents' homes; building them here keeps one
answer to "which ExecutionStore does the planning service write and the completion card
read" (the same one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plancord.agent.call_log import CallLog
from plancord.agent.execution.lease import ProcessLease
from plancord.agent.execution.network_asks import NetworkCalls
from plancord.agent.execution.start_intents import Say
from plancord.agent.execution.starter import BranchStarter
from plancord.agent.home import AgentHomes
from plancord.agent.manager import StoredSettings
from plancord.agent.owed import OwedDuties
from plancord.agent.remembered_rules import RememberedRules
from plancord.agent.workspace_probe import GitTreeProbe
from plancord.config import Config
from plancord.core.call_records import RecordBounds
from plancord.core.ports import Clock, MemberDirectory
from plancord.core.service import PlanningService
from plancord.storage.backend import Backend
from plancord.storage.call_records import CallRecordStore
from plancord.storage.call_rules import CallRuleStore
from plancord.storage.conversations import ConversationStore
from plancord.storage.executions import ExecutionStore
from plancord.storage.plan_reviews import PlanReviewStore
from plancord.storage.store import SqlStore


@dataclass(frozen=True, slots=True)
class CoreServices:
    """The services every entry point needs over one database: the bot, the operator CLI."""

    store: SqlStore
    conversations: ConversationStore
    settings: StoredSettings
    planning: PlanningService
    executions: ExecutionStore
    """Each approved plan's execution and its result: the planning service's branches, the
    runtime's steps and results, the network gate and the completion card read this one."""
    homes: AgentHomes
    """Every agent's home (its workspace, the host's folders, its policies, its branch)."""
    plan_reviews: PlanReviewStore
    """The kept reviews of plans and results: the planning service's holds, the reviews
    the runtime runs and the plan card read this one."""
    lease: ProcessLease
    """This process's lease on the store: the owner of every intent its services open
    (``agent.execution.lease``); given up by ``lease.close()`` when the process ends."""
    branches: BranchStarter | None = None
    """Starts approved plans' branches; ``recover`` undoes the starts a crash interrupted,
    and ``close`` ends its work at shutdown (None where plans execute where the workspace
    stands, as in tests of the planning alone)."""
    network_calls: NetworkCalls = field(default_factory=NetworkCalls)
    """The calls each execution has started: the execution host counts them, the network
    gate asks about one command's hosts on one card."""
    call_rules: RememberedRules | None = None
    """The operator's and members' remembered rules for tool calls, members' read from
    the store at each call (the dispatch, the permission card, ``/agent rules``, the CLI)."""
    call_log: CallLog | None = None
    """Every tool call's decision record, written in batches."""
    owed: OwedDuties | None = None
    """The writes that must happen and could not yet (``agent.owed``), retried until they
    land by the one retrier of this process (started by the bot)."""


def core_services(
    config: Config,
    db: Backend,
    clock: Clock,
    members: MemberDirectory | None = None,
    say: Say | None = None,
) -> CoreServices:
    """The one place the store, the settings and the planning service are wired together;
    plans bind to the workspace tree they were submitted against, an approved plan executes
    on a branch of its own, and approval votes are counted for voters ``members`` reads as
    still entitled (none without it); ``say`` tells a channel how an interrupted approval
    was undone. Nobody listens to the planning service yet: whoever
    builds on it registers its listeners in their one order (``PlanLifecycle``)."""
    store = SqlStore(db)
    settings = StoredSettings(config, store)
    homes = AgentHomes(config.agents_dir, config.sandbox_settings)
    executions = ExecutionStore(db)
    plan_reviews = PlanReviewStore(db)
    lease = ProcessLease(db)
    branches = BranchStarter(homes, executions, clock, lease, say)
    planning = PlanningService(
        store,
        clock,
        settings,
        probe=GitTreeProbe(config.agents_dir, config.sandbox_settings),
        members=members,
        reviews=plan_reviews,
        executions=branches,
    )
    bounds = config.rules.records
    return CoreServices(
        store,
        ConversationStore(db),
        settings,
        planning,
        executions,
        homes,
        plan_reviews,
        lease,
        branches,
        call_rules=RememberedRules(CallRuleStore(db), clock, config.rules.operator_rules),
        call_log=CallLog(
            CallRecordStore(db),
            clock,
            RecordBounds(bounds.keep_per_plan, bounds.retention_days),
        ),
        owed=OwedDuties(db, lease),
    )
