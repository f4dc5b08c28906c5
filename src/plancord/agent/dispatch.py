"""Tool dispatch: the single choke point every tool call passes. It validates the input,
asks the gate (with the read-only filter's verdict and, while executing, whether the call is
within the approved plan), asks a human when the gate says so, and only then runs the tool."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plancord.agent.runtime_settings import RuntimeSettings
from plancord.agent.sessions import AgentSession
from plancord.agent.tools.base import Tool, ToolContext, ToolRegistry, ToolResult
from plancord.agent.workspace import workspace_of
from plancord.core.drift import drift as drift_of
from plancord.core.errors import (
    PlancordError,
)
from plancord.core.gate import GateDecision, GateOutcome, GateRequest, ToolKind, decide
from plancord.core.logs import log_refusal
from plancord.core.permissions import PermissionProfile, action_string
from plancord.core.planning import (
    Actor,
    ApprovalMode,
    AuditAction,
    AuditEntry,
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
        agents_dir: Path,
        clock: Clock,
        settings: RuntimeSettings,
    ) -> None:
        self._store = store
        self._planning = planning
        self._plan_settings = plan_settings
        self._notifier = notifier
        self._registry = registry
        self._agents_dir = agents_dir
        self._clock = clock
        self._settings = settings

    async def dispatch(self, session: AgentSession, call: dict[str, Any]) -> ToolResult:
        """The single choke point: validate input, ask the gate, then (maybe) run the tool.

        Whatever goes wrong — bad input, an unknown tool, the database, the tool itself —
        becomes an ``is_error`` result for the model; nothing escapes into the loop.
        """
        name = str(call.get("name"))
        try:
            return await self._dispatch(session, name, call)
        except asyncio.CancelledError:
            raise
        except PlancordError as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:
            log.exception("agent %s: tool %s failed", session.name, name)
            return ToolResult.error(f"{name} failed: {type(exc).__name__}: {exc}")

    async def _dispatch(self, session: AgentSession, name: str, call: dict[str, Any]) -> ToolResult:
        agent = session.name
        tool = self._registry.get(name)
        if tool is None:
            names = ", ".join(t.name for t in self._registry)
            return ToolResult.error(f"Unknown tool {name!r}. Available tools: {names}.")
        try:
            args = tool.Input.model_validate(call.get("input") or {})
        except ValidationError as exc:
            return ToolResult.error(_input_problems(name, exc))
        record = await self._store.get_agent(agent)
        state = await self._store.load_state(agent)
        plan_settings = await self._plan_settings.plan_mode_for(agent)
        workspace = workspace_of(self._agents_dir, agent)
        verdict = await asyncio.to_thread(
            tool.shell_verdict, args, workspace, self._settings.shell.operator_rules
        )
        detail = tool.detail(args)
        guard = tool.guarded_as(args, workspace)
        drift = await self._drift(state, tool, args, verdict)
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
            drift=drift,
            drift_policy=plan_settings.drift,
        )
        decision = decide(request, PermissionProfile.from_stored(record.permission_profile))
        if decision.drift is not None:
            await self._audit_drift(state, request.action, decision)
        if decision.outcome is GateOutcome.REFUSE:
            if decision.refusal is not None:
                log_refusal(name, tool.kind.value, agent)
                return ToolResult.error(decision.refusal.to_text())
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
                    outside_plan=decision.drift,
                )
            )
            if answer is None:
                return ToolResult.error(
                    "Not run: nobody answered the permission request in time (treated as denied)."
                )
            if not answer:
                return ToolResult.error("Not run: a human denied permission for this action.")
        if state.phase is Phase.GATHERING:
            await self._planning.touch(agent)
        context = ToolContext(
            agent=record,
            workspace=workspace_of(self._agents_dir, agent),
            phase=state.phase,
            planning=self._planning,
            store=self._store,
            notifier=self._notifier,
            requester=session.requester,
            interactive=session.interactive,
            sandbox=(
                state.phase.is_planning and plan_settings.shell_sandbox is ShellSandbox.REQUIRED
            ),
            shell=self._settings.shell,
            sandbox_settings=self._settings.sandbox,
            ask_timeout_seconds=self._settings.ask_timeout_seconds,
            verdict=verdict,
        )
        return await tool.run(args, context)

    async def _drift(
        self, state: PlanningState, tool: Tool[Any], args: Any, verdict: Verdict | None
    ) -> str | None:
        """While executing: why this mutating call is outside the approved plan, or None."""
        if state.phase is not Phase.EXECUTING or tool.kind is not ToolKind.MUTATING:
            return None
        if (verdict is not None and verdict.allowed) or state.plan_id is None:
            return None
        revision = await self._store.get_revision(state.plan_id, state.revision)
        if revision is None:
            return None
        return drift_of(revision.plan, tool.name, tool.target_paths(args))

    async def _audit_drift(self, state: PlanningState, action: str, decision: GateDecision) -> None:
        await self._store.append_audit(
            AuditEntry(
                at=self._clock.now(),
                agent=state.agent,
                actor=Actor.agent(state.agent).label,
                action=AuditAction.DRIFT,
                plan_id=state.plan_id,
                revision=state.revision,
                detail={"call": action, "why": decision.drift, "outcome": decision.outcome.value},
            )
        )


def _requester_of(state: PlanningState, session: AgentSession) -> str | None:
    """Who a permission request is for: while a plan executes, whoever asked for the plan
    (recorded when it started), never a later speaker; otherwise who started the turn."""
    if state.phase is Phase.EXECUTING and state.requested_by is not None:
        return state.requested_by
    return session.requester.id if session.requester else None


def is_shell(tool: Tool[Any]) -> bool:
    return type(tool).shell_verdict is not Tool.shell_verdict


def _input_problems(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in error.get("loc", ())) or "input"
        problems.append(f"{loc}: {error.get('msg', 'invalid')}")
    return f"Invalid input for {name}: " + "; ".join(problems) + ". Fix the input and call again."
