"""Tool dispatch: the single choke point every tool call passes. It validates the input,
asks the gate (with the read-only filter's verdict and, while executing, whether the tool is
one a step from the host's current step on uses), asks a human when the gate says so, and
only then runs the tool. While a plan executes, every call that can change files runs held
by the ``ExecutionHost``: observed before and after, its changed paths held to the current
step, and a verdict that stops execution ends the agent's turn too."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plancord.agent.call_log import CallLog, CallTrace, gate_reason
from plancord.agent.execution.host import ExecutionHost, HeldCall
from plancord.agent.home import AgentHomes
from plancord.agent.remembered_rules import RememberedRules, applies_text, remember_scope
from plancord.agent.runtime_settings import RuntimeSettings
from plancord.agent.sessions import AgentSession
from plancord.agent.tools.base import (
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    hides_host,
    holds_read_only,
)
from plancord.agent.tools.git_write import GitCommitInput
from plancord.core.authority import Answer, Subject
from plancord.core.call_records import CallOutcome, actor_name, input_digest
from plancord.core.call_rules import CallRule
from plancord.core.decider import Decider
from plancord.core.drift_findings import DriftAction, answered
from plancord.core.errors import PlancordError
from plancord.core.execution import DriftDecision, ExecutionRecord
from plancord.core.gate import GateDecision, GateOutcome, GateRequest, ToolKind, decide
from plancord.core.holding import KnownWrites, MovesOn, hold_to_step
from plancord.core.logs import log_refusal
from plancord.core.permissions import PermissionProfile, action_string
from plancord.core.plan import Plan
from plancord.core.planning import (
    Actor,
    ApprovalMode,
    Phase,
    PlanningState,
)
from plancord.core.ports import (
    Clock,
    Notifier,
    PermissionRequest,
    SettingsProvider,
)
from plancord.core.service import PlanningService
from plancord.core.settings import ShellSandbox
from plancord.core.shell.readonly import Verdict
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)


class ToolDispatch:
    """Holds the tools and what the gate reads: the store, the plan settings, the clock."""

    def __init__(
        self,
        *,
        store: SqlStore,
        planning: PlanningService,
        plan_settings: SettingsProvider,
        notifier: Notifier,
        registry: ToolRegistry,
        homes: AgentHomes,
        clock: Clock,
        settings: RuntimeSettings,
        host: ExecutionHost | None = None,
        rules: RememberedRules | None = None,
        calls: CallLog | None = None,
    ) -> None:
        self._host = host
        self.rules = rules
        self.calls = calls
        self._store = store
        self._planning = planning
        self._plan_settings = plan_settings
        self._notifier = notifier
        self._registry = registry
        self._homes = homes
        self._clock = clock
        self._settings = settings
        self.refusals: Counter[tuple[str, str, str]] = Counter()
        """Calls refused, by ``(agent, tool kind, rule)``; the rule is ``plan_mode`` (a
        mutating call while planning, a shell command the read-only filter denied),
        ``policy`` (the permission profile) or ``drift`` (the host held an executing call
        to its step and refused or undid it). Read by the metrics."""
        self.decided: Counter[tuple[str, str, str]] = Counter()
        """Calls by ``(agent, decider, outcome)`` (``core.decider``, ``core.call_records``):
        how often each part decided, a human among them. Read by the metrics."""

    async def dispatch(self, session: AgentSession, call: dict[str, Any]) -> ToolResult:
        """The single choke point: validate input, ask the gate, then (maybe) run the tool.

        Whatever goes wrong — bad input, an unknown tool, the database, the tool itself —
        becomes an ``is_error`` result for the model; nothing escapes into the loop.
        """
        name = str(call.get("name"))
        trace = CallTrace(session.name, name, input_digest(call.get("input")))
        try:
            result = await self._dispatch(session, name, call, trace)
        except asyncio.CancelledError:
            trace.decided(trace.decider, "the call was cancelled", outcome=CallOutcome.NOT_RUN)
            self._record(trace, True)
            raise
        except PlancordError as exc:
            result = ToolResult.error(str(exc))
        except Exception as exc:
            log.exception("agent %s: tool %s failed", session.name, name)
            result = ToolResult.error(f"{name} failed: {type(exc).__name__}: {exc}")
        self._record(trace, result.is_error)
        return result

    def stopped(self, session: AgentSession, call: dict[str, Any]) -> None:
        """A call of a reply the turn was stopped before (by a member or the budget)."""
        name = str(call.get("name"))
        trace = CallTrace(session.name, name, input_digest(call.get("input")))
        trace.decided(Decider.STOP, "the turn was stopped first", outcome=CallOutcome.NOT_RUN)
        self._record(trace, True)

    def _record(self, trace: CallTrace, is_error: bool) -> None:
        """The call's decision record, kept in the background; counted for the metrics."""
        outcome = trace.outcome or (CallOutcome.FAILED if is_error else CallOutcome.RAN)
        self.decided[(trace.agent, trace.decider.value, outcome.value)] += 1
        if self.calls is not None:
            self.calls.note(trace.record(self.calls, is_error, self._clock.now()))

    async def _dispatch(
        self, session: AgentSession, name: str, call: dict[str, Any], trace: CallTrace
    ) -> ToolResult:
        agent = session.name
        registry = await self._registry.for_agent(agent)
        tool = registry.get(name)
        if tool is None:
            names = ", ".join(t.name for t in registry)
            trace.decided(Decider.GATE, "no such tool", outcome=CallOutcome.NOT_RUN)
            return ToolResult.error(f"Unknown tool {name!r}. Available tools: {names}.")
        try:
            args = tool.Input.model_validate(call.get("input") or {})
        except ValidationError as exc:
            trace.decided(Decider.GATE, "its input was invalid", outcome=CallOutcome.NOT_RUN)
            return ToolResult.error(_input_problems(name, exc))
        record = await self._store.get_agent(agent)
        state = await self._store.load_state(agent)
        trace.phase, trace.plan_id, trace.revision = (
            state.phase.value,
            state.plan_id,
            state.revision,
        )
        plan_settings = await self._plan_settings.plan_mode_for(agent)
        home = self._homes.of(agent)
        workspace = home.workspace
        inner_wall = (
            state.phase.is_planning and plan_settings.shell_sandbox is ShellSandbox.REQUIRED
        )
        read_only = home.walled_policy if inner_wall else home.read_only_policy
        verdict = await asyncio.to_thread(
            tool.shell_verdict,
            args,
            workspace,
            self._settings.shell.operator_rules,
            holds_read_only(read_only),
            hides_host(read_only),
        )
        detail = tool.detail(args)
        guard = tool.guarded_as(args, workspace)
        held = await self._held(state, tool, verdict)
        writes = await asyncio.to_thread(tool.writes, args, workspace) if held else None
        drift = ExecutionHost.tool_drift(held[1], held[0], name, writes) if held else None
        trace.step = await self._step_of(state, held, name, writes)
        shell = is_shell(tool)
        facts = None
        rule: CallRule | None = None
        if self.rules is not None and not state.phase.is_planning:
            facts = self.rules.facts(agent, guard or name, detail, shell=shell)
            rule = await self.rules.applicable(facts)
        request = GateRequest(
            tool_name=name,
            tool_kind=tool.kind,
            action=action_string(guard or name, detail),
            phase=state.phase,
            entered_at=state.entered_at,
            entered_reason=state.entry_reason or state.task,
            shell_verdict_allowed=verdict.allowed if verdict else None,
            shell_verdict_reason=verdict.reason if verdict else None,
            confirm_each_edit=(
                state.phase is Phase.EXECUTING
                and state.approval_mode is ApprovalMode.CONFIRM_EACH_EDIT
            ),
            workspace_edit=tool.workspace_edit and guard is None,
            drift=drift,
            drift_policy=plan_settings.drift,
            rule=rule,
        )
        decision = decide(request, PermissionProfile.from_stored(record.permission_profile))
        trace.decided(
            decision.decider,
            gate_reason(decision, verdict),
            rule_id=decision.rule.id if decision.rule is not None else None,
            outcome=CallOutcome.REFUSED if decision.outcome is GateOutcome.REFUSE else None,
        )
        if decision.outcome is GateOutcome.REFUSE:
            await self._drift_decided(held, request, decision, DriftDecision.REFUSED)
            if decision.refusal is not None:
                log_refusal(name, tool.kind.value, agent)
                self.refusals[(agent, tool.kind.value, "plan_mode")] += 1
                return ToolResult.error(decision.refusal.to_text())
            self.refusals[(agent, tool.kind.value, "policy")] += 1
            return ToolResult.error(f"Refused: {decision.reason}.")
        if decision.outcome is GateOutcome.ASK:
            answer = await self._notifier.ask_permission(
                PermissionRequest(
                    agent=agent,
                    action=request.action,
                    tool_name=name,
                    summary=f"{name}: {detail}",
                    requested_by=_requester_of(state, session),
                    timeout_seconds=self._settings.permission_timeout_seconds,
                    outside_plan=decision.drift.reason if decision.drift is not None else None,
                    subject=Subject.PERMISSION if decision.drift is None else Subject.DRIFT,
                    remember=remember_scope(self.rules, facts, decision, shell),
                    applies=applies_text(decision),
                )
            )
            await self._answered(trace, answer, request.action, decision)
            await self._drift_decided(held, request, decision, answered(answer))
            if answer is Answer.TIMED_OUT:
                return ToolResult.error(
                    "Not run: nobody answered the permission request in time (treated as denied)."
                )
            if answer is not Answer.ALLOWED:
                return ToolResult.error("Not run: a human denied permission for this action.")
        else:
            await self._drift_decided(held, request, decision, DriftDecision.LOGGED)
        if state.phase is Phase.GATHERING:
            await self._planning.touch(agent)
        call_held = None
        if held is not None and self._host is not None:
            call_held = HeldCall(
                record=held[0],
                plan=held[1],
                tool=name,
                action=request.action,
                requested_by=_requester_of(state, session),
                timeout_seconds=self._settings.permission_timeout_seconds,
                policy=plan_settings.drift,
                checkpoints=plan_settings.confirm_high_risk_steps,
                drift_decided=decision.drift is not None,
                commit_message=_commit_message(name, args),
                allowed=writes if decision.drift is not None else None,
            )
            moved, before = await self._host.before(call_held)
            if before.error is not None:
                trace.decided(Decider.DRIFT, before.error, outcome=CallOutcome.REFUSED)
                self.refusals[(agent, tool.kind.value, "drift")] += 1
                return await self._refused(session, state, before.error, before.stop)
            if before.answer is not None:
                trace.decided(Decider.DRIFT, before.answer, outcome=CallOutcome.NOT_RUN)
                return ToolResult(before.answer)
            call_held = replace(call_held, record=moved)
        context = ToolContext(
            agent=record,
            workspace=workspace,
            phase=state.phase,
            planning=self._planning,
            store=self._store,
            notifier=self._notifier,
            requester=session.requester,
            interactive=session.interactive,
            inner_wall=inner_wall,
            shell=self._settings.shell,
            sandbox_settings=self._settings.sandbox,
            ask_timeout_seconds=self._settings.ask_timeout_seconds,
            verdict=verdict,
            stopped=lambda: session.stop_requested,
            shared_writable=self._shared_writable(state, call_held),
        )
        if call_held is None or self._host is None:
            return await tool.run(args, context)
        try:
            result = await tool.run(args, context)
        finally:
            after = await self._host.after(call_held)
        if after.error is None:
            if after.note is None:
                return result
            return ToolResult(f"{result.content}\n\n{after.note}", result.is_error)
        self.refusals[(agent, tool.kind.value, "drift")] += 1
        trace.decided(Decider.DRIFT, after.error, outcome=CallOutcome.REFUSED)
        return await self._refused(session, state, after.error, after.stop, result)

    async def _step_of(
        self,
        state: PlanningState,
        held: tuple[ExecutionRecord, Plan] | None,
        tool: str,
        writes: KnownWrites | None,
    ) -> int | None:
        """The plan's step the call runs in while it executes (None otherwise): the current
        one, or the later one that only covers it, which the plan moves on to."""
        if held is not None:
            paths = writes.paths if writes is not None and writes.paths else None
            holding = hold_to_step(held[1], held[0].current_step, tool, paths)
            return holding.step if isinstance(holding, MovesOn) else held[0].current_step
        if state.phase is not Phase.EXECUTING or self._host is None:
            return None
        running = await self._host.running(state.agent)
        return running.current_step if running is not None else None

    async def _answered(
        self, trace: CallTrace, answer: Answer, action: str, decision: GateDecision
    ) -> None:
        """A human's answer on the call's card, with who gave it, on its record."""
        asked = decision.rule.label() if decision.rule is not None else decision.decider.value
        if answer in (Answer.ALLOWED, Answer.DENIED) and self.calls is not None:
            trace.actor = await self.calls.store.answered_by(trace.agent, action)
        who = actor_name(trace.actor) or "nobody"
        outcome = {
            Answer.ALLOWED: None,
            Answer.DENIED: CallOutcome.DENIED,
        }.get(answer, CallOutcome.UNANSWERED)
        trace.decided(Decider.HUMAN, f"{answer.value} by {who} (asked by {asked})", outcome=outcome)

    def _shared_writable(
        self, state: PlanningState, held: HeldCall | None
    ) -> tuple[Path, ...] | None:
        """While a plan executes, the shared directories the current step names (none when
        the call is not held to a step); None outside execution."""
        if state.phase is not Phase.EXECUTING:
            return None
        if held is None or held.record.current_step >= len(held.plan.steps):
            return ()
        files = held.plan.steps[held.record.current_step].files
        return self._settings.sandbox.named_shared(files)

    async def _held(
        self, state: PlanningState, tool: Tool[Any], verdict: Verdict | None
    ) -> tuple[ExecutionRecord, Plan] | None:
        """While a plan executes on its branch: the execution and the plan a call that can
        change files is held to. A shell command the read-only filter allowed runs with
        the workspace read-only, so it changes nothing and is not held."""
        if self._host is None or state.phase is not Phase.EXECUTING:
            return None
        if tool.kind is not ToolKind.MUTATING or state.plan_id is None:
            return None
        if verdict is not None and verdict.allowed:
            return None
        record = await self._host.running(state.agent)
        revision = await self._store.get_revision(state.plan_id, state.revision)
        if record is None or revision is None or record.plan_id != state.plan_id:
            return None
        return record, revision.plan

    async def _refused(
        self,
        session: AgentSession,
        state: PlanningState,
        text: str,
        stop: bool,
        result: ToolResult | None = None,
    ) -> ToolResult:
        """The host's verdict for the model; when it stops execution, the plan is ended
        (by policy, with the steps so far kept) and so is the agent's turn."""
        if stop:
            current = await self._store.load_state(state.agent)
            if current.phase is Phase.EXECUTING:
                await self._planning.complete(
                    state.agent, Actor.policy("execution"), text.split(". ")[0]
                )
            session.request_stop()
        shown = f"{result.content}\n\n{text}" if result is not None and result.content else text
        return ToolResult.error(shown)

    async def _drift_decided(
        self,
        held: tuple[ExecutionRecord, Plan] | None,
        request: GateRequest,
        decision: GateDecision,
        how: DriftDecision,
    ) -> None:
        """A drift the gate decided before the call ran, recorded (audit row and the
        execution's events) like one decided after it."""
        if held is None or self._host is None or decision.drift is None:
            return
        action = decision.drift_action or DriftAction.LOG
        await self._host.drifts.record(
            held[0], request.tool_name, request.action, decision.drift, action, how
        )


def _requester_of(state: PlanningState, session: AgentSession) -> str | None:
    """Who a permission request is for: while a plan executes, whoever asked for the plan
    (recorded when it started), never a later speaker; otherwise who started the turn."""
    if state.phase is Phase.EXECUTING and state.requested_by is not None:
        return state.requested_by
    return session.requester.id if session.requester else None


def _commit_message(name: str, args: object) -> str | None:
    """The agent's own commit message when the call is ``git_commit``."""
    if name == "git_commit" and isinstance(args, GitCommitInput):
        return args.message.strip() or None
    return None


def is_shell(tool: Tool[Any]) -> bool:
    return type(tool).shell_verdict is not Tool.shell_verdict


def _input_problems(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in error.get("loc", ())) or "input"
        problems.append(f"{loc}: {error.get('msg', 'invalid')}")
    return f"Invalid input for {name}: " + "; ".join(problems) + ". Fix the input and call again."
