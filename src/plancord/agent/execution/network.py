"""Each connection the proxy receives, decided by the approved plan's current step.

Why this exists: the proxy (``sandbox.proxy``) moves bytes; this decides, on the bot's
event loop, from the host's own record (the execution's current step, never what the
agent reports), whether a host may be reached now. A host the current step names is
allowed. Any other host is drift under the agent's drift policy: ``ask`` holds the
connection and posts the permission card ("step 2 wants files.pythonhosted.org — not in
the plan": Allow for this plan / Deny), ``refuse`` refuses it with a reason the program
shows, ``log`` lets it through and flags it. A host outside the operator's bound is refused
whatever the policy: the bound is the operator's, and no card can widen it. Every drift is
audited and recorded with the step's events, so the completion card lists it. A
connection is recorded as reached only once the proxy has made it (the decision's
``settle``), up to :data:`RECORDED_PER_HOST` per step and host, so the card lists the hosts
each step reached with their request counts, and nothing the proxy refused after the
decision (an address of this host) among them: that is recorded as refused, with the
reason; a drift let through under ``log`` is recorded as logged only once it is made.
A host is matched, recorded and shown as the one value the proxy parsed
(``core.host_names``): with its port when that is not 80 or 443.

Every connection let through carries its :class:`Grant` (the plan, the step, the host),
and the proxy ends it once :meth:`NetworkGate.recheck` no longer holds it: when its step
is no longer current (unless a human allowed the host for the plan) and when the
execution ends, whichever process of the agent's holds it (a command, an MCP server).
Hosts asked about are gathered into one card per command (``network_asks``).
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass

from plancord.agent.execution.drift_records import DriftRecords
from plancord.agent.execution.network_asks import NetworkAsks, NetworkCalls, Refused
from plancord.core.authority import Answer, Subject
from plancord.core.drift_findings import (
    DriftAction,
    DriftFinding,
    FindingKind,
    answered,
    drift_action,
)
from plancord.core.errors import CardNotShown
from plancord.core.execution import (
    DriftDecision,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    StepIndex,
    StepNumber,
    step_number,
)
from plancord.core.host_names import Endpoint
from plancord.core.network import matches_host
from plancord.core.ports import Clock, Notifier, PermissionRequest, SettingsProvider
from plancord.sandbox.proxy import ProxyVerdict
from plancord.storage.executions import ExecutionStore
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)

NETWORK_TOOL = "network"
"""The tool name of the network's events: drift, and each connection let through."""
ALLOW_FOR_PLAN = ("Allow for this plan", "Deny")
RECORDED_PER_HOST = 100
"""Connections to one host in one step recorded as events (the completion card counts
them); past that the card says "100+", and the store does not grow with a busy download."""


CONNECT_ACTION = "connect to "


def reached_action(host: str) -> str:
    return f"reach {host}"


@dataclass(frozen=True, slots=True)
class Grant:
    """What a connection let through came under: the plan, the step current then, the
    host, and whether a human allowed it for the rest of the plan. The proxy ends the
    connection once this no longer holds (:meth:`NetworkGate.recheck`)."""

    plan_id: str
    step: StepIndex
    host: str
    for_plan: bool = False


class NetworkGate:
    """The decision behind every proxied connection, and the counts of what got through."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        store: SqlStore,
        settings: SettingsProvider,
        notifier: Notifier,
        clock: Clock,
        ask_timeout_seconds: float = 600.0,
        calls: NetworkCalls | None = None,
    ) -> None:
        self._executions = executions
        self._store = store
        self._settings = settings
        self._notifier = notifier
        self._clock = clock
        self._ask_timeout = ask_timeout_seconds
        self._allowed: dict[str, set[str]] = {}
        """Per plan id, the hosts a human allowed for the rest of that plan."""
        self._asks = NetworkAsks(self._post, calls or NetworkCalls())
        self._reached: dict[str, Counter[tuple[StepNumber, str]]] = {}
        """Per plan id, connections let through per (step, host)."""
        self._drifts = DriftRecords(executions, store, clock)
        self._plan_of: dict[str, str] = {}
        """Per agent, the plan whose hosts are kept above (an agent runs one at a time)."""

    async def decide(self, agent: str, endpoint: Endpoint) -> ProxyVerdict:
        record = await self._executions.running(agent)
        if record is None:
            return ProxyVerdict(False, "no approved plan is executing; no host may be reached")
        if self._plan_of.get(agent) != record.plan_id:
            await self._follow(agent, record.plan_id)
        revision = await self._store.get_revision(record.plan_id, record.revision)
        if revision is None:
            return ProxyVerdict(False, "the approved plan could not be read; refused")
        plan = revision.plan
        number = step_number(record.current_step)
        step = plan.steps[record.current_step] if record.current_step < len(plan.steps) else None
        granted = step.network if step is not None else ()
        host = endpoint.shown
        if matches_host(granted, endpoint):
            return self._through(record, host)
        if host in self._allowed.get(record.plan_id, set()):
            return self._through(record, host, for_plan=True)
        if not matches_host(self._settings.network_bound_for(agent).allow, endpoint):
            finding = DriftFinding(FindingKind.BOUND, _outside_bound(host))
        else:
            finding = _outside_step(record, host)
        action = drift_action(finding, (await self._settings.plan_mode_for(agent)).drift)
        if action is DriftAction.LOG:
            return self._through(record, host, logged=finding)
        if action is DriftAction.ASK:
            allowed = await self._asks.ask(record, host)
            if isinstance(allowed, Refused):
                return ProxyVerdict(False, f"refused: {finding.why}; {allowed.reason}")
            if allowed:
                return self._through(record, host, for_plan=True)
            return ProxyVerdict(False, f"denied: {finding.why}; a human did not allow it")
        # Refused (a connection is always held, so none is past stopping).
        await self._drift(record, host, finding, action, DriftDecision.REFUSED)
        if finding.kind is FindingKind.BOUND:
            return ProxyVerdict(False, f"refused: {finding.why}")
        return ProxyVerdict(
            False,
            f"refused: {finding.why} (step {number} names {_listed(granted)}); if the plan "
            "must change, submit an amendment with submit_plan",
        )

    async def recheck(self, agent: str, grants: frozenset[Hashable]) -> frozenset[Hashable]:
        """The grants among ``grants`` that still hold: the agent's plan still executing,
        and the step that granted each still current (or its host allowed for the plan)."""
        record = await self._executions.running(agent)
        if record is None:
            return frozenset()
        allowed = self._allowed.get(record.plan_id, set())
        return frozenset(
            grant
            for grant in grants
            if isinstance(grant, Grant)
            and grant.plan_id == record.plan_id
            and (grant.step == record.current_step or (grant.for_plan and grant.host in allowed))
        )

    async def _follow(self, agent: str, plan_id: str) -> None:
        """Keep ``plan_id``'s hosts from now on, the previous plan's forgotten: the hosts a
        human allowed for it read back from its events (so they hold after a restart) and
        its recorded connections counted."""
        previous = self._plan_of.pop(agent, None)
        if previous is not None:
            self._allowed.pop(previous, None)
            self._reached.pop(previous, None)
            self._asks.forget(previous)
        allowed: set[str] = set()
        reached: Counter[tuple[StepNumber, str]] = Counter()
        for event in await self._executions.events(plan_id):
            if event.tool != NETWORK_TOOL:
                continue
            if event.kind is ExecutionEventKind.DRIFT and event.decision is DriftDecision.ALLOWED:
                allowed.add(event.action.removeprefix(CONNECT_ACTION))
            elif event.kind is ExecutionEventKind.COMMAND:
                reached[(event.step, event.action.removeprefix(reached_action("")))] += 1
        self._allowed[plan_id] = allowed
        self._reached[plan_id] = reached
        self._plan_of[agent] = plan_id

    def _through(
        self,
        record: ExecutionRecord,
        host: str,
        *,
        for_plan: bool = False,
        logged: DriftFinding | None = None,
    ) -> ProxyVerdict:
        """Let the connection through; the proxy settles it once it knows its fate, and
        ends it once its grant no longer holds. ``logged``: a drift let through under
        ``log``, recorded as logged only if the connection is made."""
        settle = functools.partial(self._settled, record, host, logged)
        grant = Grant(record.plan_id, record.current_step, host, for_plan)
        return ProxyVerdict(True, settle=settle, grant=grant)

    async def _settled(
        self,
        record: ExecutionRecord,
        host: str,
        logged: DriftFinding | None,
        refused: str | None,
    ) -> None:
        """Record what became of a connection let through: reached (with the step's events,
        up to a bound), or refused by the proxy after the decision, with its reason."""
        step = step_number(record.current_step)
        if refused is not None:
            await self._record_drift(record, step, host, refused, DriftDecision.REFUSED)
            return
        if logged is not None:
            await self._drift(record, host, logged, DriftAction.LOG, DriftDecision.LOGGED)
        counts = self._reached.setdefault(record.plan_id, Counter())
        counts[(step, host)] += 1
        if counts[(step, host)] <= RECORDED_PER_HOST:
            await self._executions.add_event(
                ExecutionEvent(
                    plan_id=record.plan_id,
                    at=self._clock.now(),
                    step=step,
                    kind=ExecutionEventKind.COMMAND,
                    tool=NETWORK_TOOL,
                    action=reached_action(host),
                )
            )

    async def _post(self, record: ExecutionRecord, hosts: tuple[str, ...]) -> Answer:
        """One card asking about ``hosts`` (a round of ``network_asks``); each host's drift
        recorded with the answer, and the hosts allowed for the rest of the plan when it
        allows."""
        number = step_number(record.current_step)
        listed = ", ".join(hosts)
        try:
            # The card is for whoever asked for the plan, as every execution card is.
            state = await self._store.load_state(record.agent)
            answer = await self._notifier.ask_permission(
                PermissionRequest(
                    agent=record.agent,
                    action=CONNECT_ACTION + listed,
                    tool_name=NETWORK_TOOL,
                    summary=f"reach {listed}",
                    requested_by=state.requested_by,
                    timeout_seconds=self._ask_timeout,
                    outside_plan=f"step {number} wants {listed} — not in the plan",
                    labels=ALLOW_FOR_PLAN,
                    subject=Subject.DRIFT,
                )
            )
        except CardNotShown as exc:
            log.warning("agent %s: the network card was not shown: %s", record.agent, exc)
            answer = Answer.NOT_SHOWN
        if answer is Answer.ALLOWED:
            self._allowed.setdefault(record.plan_id, set()).update(hosts)
        for host in hosts:
            finding = _outside_step(record, host)
            await self._drift(record, host, finding, DriftAction.ASK, answered(answer))
        return answer

    async def _drift(
        self,
        record: ExecutionRecord,
        host: str,
        finding: DriftFinding,
        action: DriftAction,
        decision: DriftDecision,
    ) -> None:
        """The drift's audit row and the step's event (the completion card's)."""
        await self._drifts.record(
            record, NETWORK_TOOL, CONNECT_ACTION + host, finding, action, decision
        )

    async def _record_drift(
        self,
        record: ExecutionRecord,
        step: StepNumber,
        host: str,
        why: str,
        decision: DriftDecision,
    ) -> None:
        """One connection not let through as planned, with the step's events."""
        await self._executions.add_event(
            ExecutionEvent(
                plan_id=record.plan_id,
                at=self._clock.now(),
                step=step,
                kind=ExecutionEventKind.DRIFT,
                tool=NETWORK_TOOL,
                action=CONNECT_ACTION + host,
                reason=why,
                decision=decision,
            )
        )


def _outside_step(record: ExecutionRecord, host: str) -> DriftFinding:
    """``host`` is not named by ``record``'s current step."""
    number = step_number(record.current_step)
    return DriftFinding(FindingKind.HOST, f"step {number} wants {host} — not in the plan")


def _outside_bound(host: str) -> str:
    return f"{host} is not among the hosts the operator allows this agent"


def _listed(hosts: tuple[str, ...]) -> str:
    return ", ".join(hosts) if hosts else "no host"


_REFUSALS = (DriftDecision.REFUSED, DriftDecision.DENIED, DriftDecision.TIMED_OUT)


class RefusedConnections:
    """What tells the model which connections were refused while its call ran: a program
    shows a refused HTTPS connection only as a 403 to its CONNECT, so the host adds the
    reasons (from the step's events) to the call's result."""

    def __init__(self, executions: ExecutionStore, calls: NetworkCalls | None = None) -> None:
        self._executions = executions
        self._calls = calls or NetworkCalls()
        self._seen: dict[str, int] = {}

    async def mark(self, record: ExecutionRecord) -> None:
        """Before a call: the refusals recorded so far; the call counted (a command's
        connections are asked about together, ``network_asks``)."""
        self._calls.started(record.plan_id)
        self._seen[record.plan_id] = len(await self._refusals(record.plan_id))

    async def since(self, record: ExecutionRecord) -> str | None:
        """After it: a note naming each connection refused meanwhile, or None."""
        before = self._seen.pop(record.plan_id, None)
        if before is None:
            return None
        new = (await self._refusals(record.plan_id))[before:]
        if not new:
            return None
        lines = [
            f"- {event.reason} ({event.decision.value})" for event in new[:10] if event.decision
        ]
        more = f"\n- … and {len(new) - 10} more" if len(new) > 10 else ""
        return (
            "[network: connections refused during this call]\n"
            + "\n".join(lines)
            + more
            + "\nOnly the hosts the current step names can be reached; if the plan must "
            "change, submit an amendment with submit_plan."
        )

    async def _refusals(self, plan_id: str) -> list[ExecutionEvent]:
        events = await self._executions.events(plan_id, ExecutionEventKind.DRIFT)
        return [e for e in events if e.tool == NETWORK_TOOL and e.decision in _REFUSALS]
