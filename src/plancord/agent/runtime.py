"""The agent runtime: one tool loop per agent, every tool call through the gate.

A user message starts a turn (or joins the running one as an interjection). Each iteration
builds a request from the stored conversation and the regime, calls the model, and answers
every ``tool_use`` block of the reply together in one user message. A tool call is dispatched
only after ``plancord.core.gate.decide`` allowed it for the phase the store holds *now*, so
``enter_plan_mode`` takes effect for the very next call of the same turn. ``submit_plan`` ends
the turn; the runtime listens to the planning service and resumes the agent when a human
approves (or asks for changes), with a host message stating what changed.

The runtime talks to the outside only through the ``Notifier`` and ``ModelClient`` ports, so
Discord, a console or a test can drive it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plancord.agent.agent_settings import AgentOverrides, ThinkingSettings
from plancord.agent.context import (
    build_messages,
    compaction_cut,
    estimate_tokens,
    regime_text,
    repair_history,
    system_blocks,
    text_of,
    transcript,
)
from plancord.agent.interruptions import TurnMarkers
from plancord.agent.stop_reasons import NextStep, next_step, runs_tools
from plancord.agent.tools.base import ShellSettings, Tool, ToolContext, ToolRegistry, ToolResult
from plancord.agent.turns import Block, TurnBody, TurnSlot
from plancord.core.agents import AgentRecord
from plancord.core.drift import drift as drift_of
from plancord.core.errors import (
    ContextTooLong,
    ModelCallFailed,
    PlancordError,
    StorageError,
    ToolResultsNotSaved,
)
from plancord.core.gate import GateDecision, GateOutcome, GateRequest, ToolKind, decide
from plancord.core.logs import log_refusal
from plancord.core.permissions import PermissionProfile, action_string
from plancord.core.planning import (
    Actor,
    ApprovalMode,
    AuditEntry,
    EntrySource,
    Phase,
    PlanningState,
)
from plancord.core.ports import (
    Clock,
    ModelClient,
    ModelReply,
    ModelRequest,
    Notifier,
    PermissionRequest,
    PlanningChange,
    SettingsProvider,
)
from plancord.core.service import PlanningService
from plancord.core.settings import ShellSandbox, ToolVisibility
from plancord.core.shell.readonly import Verdict
from plancord.core.shell.sandbox.policy import SandboxSettings
from plancord.llm.models import bounded_max_tokens
from plancord.storage.conversations import ConversationStore, Message
from plancord.storage.store import SqliteStore

log = logging.getLogger(__name__)

HOST = "[plancord]"
CONTINUE_PROMPT = (
    f"{HOST} Your previous reply was cut off at the output token limit. "
    "Continue exactly where you stopped."
)
MIN_ANSWER_TOKENS = 1024
RESUME_PROMPT = f"{HOST} Continue."
SUMMARY_PROMPT = (
    "Summarise the conversation below so an agent can continue the work without it: the task, "
    "decisions taken, files read or changed and what they contain that matters, open questions, "
    "and the current state. Be concise and concrete."
)


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    max_tokens: int = 8192
    max_iterations: int = 50
    context_window_tokens: int = 200_000
    compact_at_fraction: float = 0.6
    keep_recent_fraction: float = 0.2
    shell: ShellSettings = field(default_factory=ShellSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    ask_timeout_seconds: float = 600.0
    permission_timeout_seconds: float = 600.0
    default_model: str = "claude-sonnet-5-5"
    thinking: ThinkingSettings = field(default_factory=ThinkingSettings)
    agents: Mapping[str, AgentOverrides] = field(default_factory=dict)

    def model_for(self, agent: str, record: AgentRecord) -> str:
        override = self.agents.get(agent)
        return (override and override.model) or record.model or self.default_model

    def role_for(self, agent: str, record: AgentRecord) -> str | None:
        override = self.agents.get(agent)
        return (override and override.role) or record.role


@dataclass(slots=True)
class Elsewhere:
    """A request that arrived from another place (a thread) while a turn ran there: it gets
    a turn of its own afterwards, answered where it was asked."""

    blocks: list[Block]
    requester: Actor
    origin: object
    interactive: bool = True


@dataclass(slots=True)
class AgentSession(TurnSlot):
    """The live side of one agent: its turn slot and who the running turn serves. The
    requester is fixed when a turn starts; later messages that join it do not change it."""

    requester: Actor | None = None
    interactive: bool = True
    elsewhere: list[Elsewhere] = field(default_factory=list)


class AgentRuntime:
    def __init__(
        self,
        *,
        store: SqliteStore,
        conversations: ConversationStore,
        planning: PlanningService,
        plan_settings: SettingsProvider,
        notifier: Notifier,
        model: ModelClient,
        registry: ToolRegistry,
        agents_dir: Path,
        clock: Clock,
        settings: RuntimeSettings | None = None,
    ) -> None:
        self.store = store
        self.conversations = conversations
        self.planning = planning
        self.plan_settings = plan_settings
        self.notifier = notifier
        self.model = model
        self.registry = registry
        self.agents_dir = agents_dir
        self.clock = clock
        self.settings = settings or RuntimeSettings()
        self._sessions: dict[str, AgentSession] = {}
        self.markers = TurnMarkers(agents_dir)
        self._shutting_down = False
        self.turn_origin: Callable[[str, object], None] | None = None
        """Told where a queued request's turn answers (``queue_elsewhere``) when it starts."""
        planning.add_notifier(self)

    # -- entry points ----------------------------------------------------------------------

    def workspace_of(self, agent: str) -> Path:
        return self.agents_dir / agent / "workspace"

    def session(self, agent: str) -> AgentSession:
        return self._sessions.setdefault(agent, AgentSession(agent))

    def is_busy(self, agent: str) -> bool:
        return self.session(agent).busy

    def any_busy(self) -> bool:
        """Whether any agent has a turn running."""
        return any(session.busy for session in self._sessions.values())

    async def handle_message(
        self, agent: str, text: str, author: Actor, *, interactive: bool = True
    ) -> None:
        """A human wrote to the agent: start a turn, or join the running one.

        The turn is claimed before anything is awaited, so messages arriving together
        start one loop, and the later ones join it (see ``plancord.agent.turns``).
        """
        session = self.session(agent)
        block = {"type": "text", "text": f"{author.name}: {text}"}

        async def enter_default() -> None:
            state = await self.store.load_state(agent)
            if state.phase is Phase.INACTIVE:
                record = await self.store.get_agent(agent)
                await self.planning.enter_default(
                    agent,
                    self.settings.role_for(agent, record),
                    task=text,
                    requested_by=author,
                    interactive=interactive,
                )

        if session.claim([block], lambda blocks: self._run(session, blocks, enter_default)):
            session.requester = author
            session.interactive = interactive

    def queue_elsewhere(
        self, agent: str, text: str, author: Actor, origin: object, *, interactive: bool = True
    ) -> None:
        """A message from another place than the running turn's: it does not join that turn
        (whose output stays where it started) but gets the next turn, answered at ``origin``
        (``turn_origin`` is told when it starts)."""
        block = {"type": "text", "text": f"{author.name}: {text}"}
        session = self.session(agent)
        session.elsewhere.append(Elsewhere([block], author, origin, interactive))
        if not session.busy:
            self._start_elsewhere(session)

    def _start_elsewhere(self, session: AgentSession) -> bool:
        if not session.elsewhere:
            return False
        first = session.elsewhere.pop(0)
        blocks = list(first.blocks)
        while session.elsewhere and session.elsewhere[0].origin == first.origin:
            blocks += session.elsewhere.pop(0).blocks
        if self.turn_origin is not None:
            self.turn_origin(session.name, first.origin)
        session.requester = first.requester
        session.interactive = first.interactive
        session.start(blocks, self._turn(session))
        return True

    async def start_planning(self, agent: str, task: str | None, author: Actor) -> bool:
        """``/plan start``: enter plan mode and set the agent to work; False if already planning."""
        outcome = await self.planning.enter(
            agent, source=EntrySource.USER, actor=author, task=task, reason=task
        )
        if not outcome.entered:
            return False
        session = self.session(agent)
        text = f"{author.name} asked you to plan" + (f": {task}" if task else " the next task.")
        block = {"type": "text", "text": f"{HOST} {text}"}
        if session.claim([block], self._turn(session)):
            session.requester = author
            session.interactive = True
        return True

    async def stop(self, agent: str) -> bool:
        """End the running loop cleanly between tool calls. False when nothing was running."""
        return self.session(agent).request_stop()

    async def wait_idle(self, agent: str) -> None:
        """Wait until the agent's loop (and any loop it chains into) has finished."""
        session = self.session(agent)
        while session.task is not None and not session.task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(session.task)

    async def shutdown(self, *, notice: bool = False, grace_seconds: float = 10.0) -> None:
        """Stop every running turn: cancel it (which kills the processes its tools started)
        and wait at most ``grace_seconds`` for it to unwind. With ``notice``, each busy
        agent's channel is told first. The turns' markers stay, so the next start resumes."""
        self._shutting_down = True
        busy = [s for s in self._sessions.values() if s.task is not None and not s.task.done()]
        if notice:
            for session in busy:
                await self._say(
                    session.name,
                    "⏹ plancord is shutting down; this turn was interrupted. "
                    "It resumes when plancord is back.",
                )
        tasks = [s.task for s in busy if s.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace_seconds)
            for task in pending:
                log.warning("a turn did not stop within %s s of shutdown: %s", grace_seconds, task)

    async def resume_interrupted(self) -> list[str]:
        """After a start: tell each agent whose turn was cut short, and resume it when its
        phase says work goes on (executing, gathering); a submitted plan keeps waiting for
        its decision and an agent outside plan mode waits for its user. Returns the agents."""
        resumed: list[str] = []
        for agent in self.markers.marked():
            self.markers.clear(agent)
            try:
                state = await self.store.load_state(agent)
            except PlancordError:
                continue
            resumed.append(agent)
            if state.phase in (Phase.EXECUTING, Phase.GATHERING):
                work = "the approved plan" if state.phase is Phase.EXECUTING else "planning"
                await self._say(agent, f"↻ plancord restarted during my turn; resuming {work}.")
                text = (
                    f"{HOST} plancord restarted during your turn; anything that was running "
                    "was stopped. Check where you were and continue."
                )
                self.session(agent).claim(
                    [{"type": "text", "text": text}], self._turn(self.session(agent))
                )
            elif state.phase is Phase.SUBMITTED:
                await self._say(
                    agent, "↻ plancord restarted; my plan is still waiting for a decision."
                )
            else:
                await self._say(
                    agent,
                    "↻ plancord restarted during my turn, which was interrupted; "
                    "send a message to continue.",
                )
        return resumed

    # -- planning events -------------------------------------------------------------------

    async def planning_changed(self, change: PlanningChange) -> None:
        """Resume or stop the agent when a human decides; record the change in its history."""
        agent = change.after.agent
        session = self.session(agent)
        rev = change.revision.revision if change.revision else change.before.revision
        who = change.actor.name
        if change.action == "approved":
            mode = change.after.approval_mode
            text = f"{HOST} Plan v{rev} approved by {who}: you may now modify files."
            if mode is ApprovalMode.CONFIRM_EACH_EDIT:
                text += " Every change will ask a human for permission first."
            if mode is ApprovalMode.FRESH_CONTEXT and not session.busy:
                await self._fresh_context(agent, change)
                text += " The earlier conversation was cleared; the approved plan is below."
            await self._resume(session, text)
        elif change.action == "changes-requested":
            step = change.detail.get("step")
            where = f" (step {step})" if step else ""
            feedback = change.detail.get("feedback", "")
            text = (
                f"{HOST} {who} asked for changes to plan v{rev}{where}: {feedback}\n"
                f"Revise the plan and submit v{rev + 1} with submit_plan."
            )
            await self._resume(session, text)
        elif change.action in ("rejected", "cancelled", "timed-out"):
            reason = change.detail.get("reason")
            words = {
                "rejected": f"Plan v{rev} was rejected by {who}",
                "cancelled": f"Planning was cancelled by {who}",
                "timed-out": "Planning timed out with no decision",
            }[change.action]
            text = f"{HOST} {words}" + (f": {reason}" if reason else "") + "."
            text += " Plan mode has ended; do not carry out the plan."
            if session.busy:
                session.joining.append({"type": "text", "text": text})
                if change.action == "cancelled":
                    session.request_stop()
            else:
                await self._add_user_blocks(agent, [{"type": "text", "text": text}])

    async def _resume(self, session: AgentSession, text: str) -> None:
        session.claim([{"type": "text", "text": text}], self._turn(session))

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
        await self.conversations.replace_all(agent, [opening], self.clock.now())

    # -- the loop --------------------------------------------------------------------------

    def _turn(self, session: AgentSession) -> TurnBody:
        return lambda blocks: self._run(session, blocks)

    async def _run(
        self,
        session: AgentSession,
        blocks: list[Block],
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        agent = session.name
        self.markers.mark(agent)
        try:
            if prepare is not None:
                await prepare()
            await self._add_user_blocks(agent, blocks)
            await self._loop(session)
        except ModelCallFailed as exc:
            await self._say(agent, f"⚠️ {exc} Your message is kept; send another to retry.")
        except PlancordError as exc:
            await self._say(agent, f"⚠️ {exc}")
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("agent %s: the tool loop failed", agent)
            await self._say(agent, "⚠️ Something went wrong inside plancord; the error is logged.")
        finally:
            if not self._shutting_down:
                await self._follow_up(session)
                if session.task is asyncio.current_task():
                    self.markers.clear(agent)

    async def _follow_up(self, session: AgentSession) -> None:
        """After a turn: serve what arrived during it. Requests that joined a turn that was
        stopped stay in the conversation only; requests sent after the stop get a new turn."""
        if session.stop_requested:
            joined = session.take_joining()
            if joined:
                with contextlib.suppress(PlancordError):
                    await self._add_user_blocks(session.name, joined)
            waiting = session.take_after_stop()
        else:
            waiting = session.take_joining() + session.take_after_stop()
        if waiting:
            session.start(waiting, self._turn(session))
        elif not session.stop_requested:
            self._start_elsewhere(session)

    async def _loop(self, session: AgentSession) -> None:
        agent = session.name
        continued = False
        for _ in range(self.settings.max_iterations):
            if session.stop_requested:
                await self._say(agent, "Stopped.")
                return
            await self._flush_inbox(session)
            reply = await self._call_model(agent)
            step = next_step(reply.stop_reason)
            content = list(reply.content)
            if not runs_tools(step):
                content = [b for b in content if b.get("type") != "tool_use"]
            tool_uses = [b for b in content if b.get("type") == "tool_use"]
            truncated = step in (NextStep.CONTINUE_TRUNCATED, NextStep.COMPACT_AND_CONTINUE)
            if truncated and not _has_visible(content):
                # Cut off while thinking: an assistant turn of nothing but an unfinished
                # thought cannot be continued and must not be kept.
                await self._say(
                    agent,
                    "(The model used its whole output budget before answering; raise "
                    "anthropic.max_tokens or turn thinking off for this agent.)",
                )
                return
            await self._add_assistant(agent, content)
            text = text_of(content)
            if text:
                await self._say(agent, text)
            if step is NextStep.REFUSED:
                await self._say(agent, "The model declined to continue with this request.")
                return
            if step is NextStep.UNKNOWN:
                await self._say(
                    agent,
                    f"(The model stopped for a reason plancord does not know: "
                    f"{reply.stop_reason!r}; send a message to continue.)",
                )
                return
            if step is NextStep.RESUME_PAUSED:
                await self._add_user_blocks(agent, [{"type": "text", "text": RESUME_PROMPT}])
                continue
            if truncated:
                if continued:
                    await self._say(agent, "(The reply was cut off at the token limit.)")
                    return
                continued = True
                if step is NextStep.COMPACT_AND_CONTINUE:
                    await self.compact(agent)
                await self._add_user_blocks(agent, [{"type": "text", "text": CONTINUE_PROMPT}])
                continue
            if step is NextStep.ANSWERED or not tool_uses:
                return
            submitted = await self._run_tools(session, tool_uses)
            if submitted or session.stop_requested:
                if session.stop_requested:
                    await self._say(agent, "Stopped.")
                return
        await self._say(
            agent,
            f"Stopped after {self.settings.max_iterations} model calls in one turn; "
            "send a message to continue.",
        )

    async def _run_tools(self, session: AgentSession, calls: Sequence[dict[str, Any]]) -> bool:
        """Answer a reply's tool calls in one user message; True if a plan was submitted."""
        results: list[dict[str, Any]] = []
        summary: list[str] = []
        submitted = False
        for call in calls:
            if session.stop_requested:
                result = ToolResult.error("Not run: the user stopped the agent.")
            else:
                result = await self.dispatch(session, call)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call["id"],
                    "content": result.content or "(no output)",
                    **({"is_error": True} if result.is_error else {}),
                }
            )
            summary.append(("✗ " if result.is_error else "") + _call_label(call))
            if call.get("name") == "submit_plan" and not result.is_error:
                submitted = True
        with contextlib.suppress(Exception):
            await self.notifier.activity(session.name, " · ".join(summary))
        try:
            await self._add_user_blocks(session.name, results)
        except StorageError as exc:
            # The tools have run: their effects are real even though the database refused
            # the record of them, so "nothing was changed" would be false here.
            raise ToolResultsNotSaved(" · ".join(summary), exc) from exc
        return submitted

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
        tool = self.registry.get(name)
        if tool is None:
            names = ", ".join(t.name for t in self.registry)
            return ToolResult.error(f"Unknown tool {name!r}. Available tools: {names}.")
        try:
            args = tool.Input.model_validate(call.get("input") or {})
        except ValidationError as exc:
            return ToolResult.error(_input_problems(name, exc))
        record = await self.store.get_agent(agent)
        state = await self.store.load_state(agent)
        plan_settings = await self.plan_settings.plan_mode_for(agent)
        workspace = self.workspace_of(agent)
        verdict = await asyncio.to_thread(tool.shell_verdict, args, workspace)
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
            answer = await self.notifier.ask_permission(
                PermissionRequest(
                    agent=agent,
                    action=request.action,
                    tool_name=name,
                    summary=f"{name}: {detail}",
                    requested_by=_requester_of(state, session),
                    timeout_seconds=self.settings.permission_timeout_seconds,
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
            await self.planning.touch(agent)
        context = ToolContext(
            agent=record,
            workspace=self.workspace_of(agent),
            phase=state.phase,
            planning=self.planning,
            store=self.store,
            notifier=self.notifier,
            requester=session.requester,
            interactive=session.interactive,
            sandbox=(
                state.phase.is_planning and plan_settings.shell_sandbox is ShellSandbox.REQUIRED
            ),
            shell=self.settings.shell,
            sandbox_settings=self.settings.sandbox,
            ask_timeout_seconds=self.settings.ask_timeout_seconds,
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
        revision = await self.store.get_revision(state.plan_id, state.revision)
        if revision is None:
            return None
        return drift_of(revision.plan, tool.name, tool.target_paths(args))

    async def _audit_drift(self, state: PlanningState, action: str, decision: GateDecision) -> None:
        await self.store.append_audit(
            AuditEntry(
                at=self.clock.now(),
                agent=state.agent,
                actor=Actor.agent(state.agent).label,
                action="drift",
                plan_id=state.plan_id,
                revision=state.revision,
                detail={"call": action, "why": decision.drift, "outcome": decision.outcome.value},
            )
        )

    # -- requests --------------------------------------------------------------------------

    async def tool_schemas(self, agent: str) -> list[dict[str, Any]]:
        """Identical in every phase with ``stable``; ``filter`` hides what the gate would refuse."""
        settings = await self.plan_settings.plan_mode_for(agent)
        if settings.tool_visibility is ToolVisibility.STABLE:
            return self.registry.schemas()
        phase = (await self.store.load_state(agent)).phase
        if not phase.is_planning:
            return self.registry.schemas()
        return self.registry.schemas(lambda t: t.kind is not ToolKind.MUTATING or _is_shell(t))

    async def build_request(self, agent: str, record: AgentRecord | None = None) -> ModelRequest:
        record = record or await self.store.get_agent(agent)
        status = await self.planning.status(agent)
        history = await self.conversations.load(agent)
        model = self.settings.model_for(agent, record)
        thinking = self.settings.thinking.request_field(self.settings.agents.get(agent))
        wanted = self.settings.max_tokens
        if thinking is not None:
            wanted = max(wanted, thinking["budget_tokens"] + MIN_ANSWER_TOKENS)
        return ModelRequest(
            model=model,
            max_tokens=bounded_max_tokens(model, wanted),
            thinking=thinking,
            system=system_blocks(record.system_prompt),
            tools=await self.tool_schemas(agent),
            messages=build_messages(history, regime_text(status.state, status.revision)),
        )

    async def _call_model(self, agent: str) -> ModelReply:
        history, changed = repair_history(await self.conversations.load(agent))
        if changed:
            await self.conversations.replace_all(agent, history, self.clock.now())
        record = await self.store.get_agent(agent)
        request = await self.build_request(agent, record)
        limit = self.settings.context_window_tokens * self.settings.compact_at_fraction
        too_big = estimate_tokens(request.messages) + estimate_tokens(request.tools) > limit
        if too_big and await self.compact(agent, record):
            request = await self.build_request(agent, record)
        try:
            reply = await self.model.create(request)
        except ContextTooLong:
            if not await self.compact(agent, record, keep_fraction=0.05):
                raise
            request = await self.build_request(agent, record)
            reply = await self.model.create(request)
        await self.conversations.record_usage(
            agent, request.model, reply.usage, reply.stop_reason, self.clock.now()
        )
        return reply

    async def compact(
        self, agent: str, record: AgentRecord | None = None, *, keep_fraction: float | None = None
    ) -> bool:
        """Summarise older turns so the conversation fits; the regime is rebuilt every request.

        The newest turns are kept verbatim, thinking blocks and their signatures included,
        and the cut falls only before a plain user message, so no tool call is separated
        from its result and no thinking block is edited."""
        record = record or await self.store.get_agent(agent)
        history = await self.conversations.load(agent)
        fraction = self.settings.keep_recent_fraction if keep_fraction is None else keep_fraction
        keep = int(self.settings.context_window_tokens * fraction)
        cut = compaction_cut(history, keep)
        if cut is None or cut < 2:
            return False
        model = self.settings.model_for(agent, record)
        request = ModelRequest(
            model=model,
            max_tokens=bounded_max_tokens(model, min(4096, self.settings.max_tokens)),
            system=[{"type": "text", "text": SUMMARY_PROMPT}],
            tools=[],
            messages=[
                {"role": "user", "content": [{"type": "text", "text": transcript(history[:cut])}]}
            ],
        )
        reply = await self.model.create(request)
        await self.conversations.record_usage(
            agent, request.model, reply.usage, reply.stop_reason, self.clock.now()
        )
        summary = text_of(reply.content) or "(no summary)"
        compacted: list[Message] = [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f"{HOST} Summary of the earlier conversation:\n{summary}",
                    }
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "Understood; continuing."}]},
            *history[cut:],
        ]
        await self.conversations.replace_all(agent, compacted, self.clock.now())
        return True

    # -- conversation edits ----------------------------------------------------------------

    async def _add_user_blocks(self, agent: str, blocks: list[dict[str, Any]]) -> None:
        """Append to the conversation as user content, merged into a trailing user message."""
        if not blocks:
            return
        history = await self.conversations.load(agent)
        if history and history[-1]["role"] == "user":
            last = history[-1]
            await self.conversations.replace_last(
                agent, {"role": "user", "content": [*last["content"], *blocks]}
            )
        else:
            await self.conversations.append(
                agent, {"role": "user", "content": list(blocks)}, self.clock.now()
            )

    async def _add_assistant(self, agent: str, content: list[dict[str, Any]]) -> None:
        blocks = [b for b in content if b.get("type") != "text" or b.get("text", "").strip()]
        if blocks:
            await self.conversations.append(
                agent, {"role": "assistant", "content": blocks}, self.clock.now()
            )

    async def _flush_inbox(self, session: AgentSession) -> None:
        joined = session.take_joining()
        if joined:
            await self._add_user_blocks(session.name, joined)

    async def _say(self, agent: str, text: str) -> None:
        try:
            await self.notifier.say(agent, text)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("agent %s: could not deliver a message", agent)


def _has_visible(content: list[dict[str, Any]]) -> bool:
    """Whether a reply holds anything but thinking: text or a tool call."""
    return any(b.get("type") not in ("thinking", "redacted_thinking") for b in content)


def _requester_of(state: PlanningState, session: AgentSession) -> str | None:
    """Who a permission request is for: while a plan executes, whoever asked for the plan
    (recorded when it started), never a later speaker; otherwise who started the turn."""
    if state.phase is Phase.EXECUTING and state.requested_by is not None:
        return state.requested_by
    return session.requester.id if session.requester else None


def _is_shell(tool: Tool[Any]) -> bool:
    return type(tool).shell_verdict is not Tool.shell_verdict


def _call_label(call: dict[str, Any]) -> str:
    args = call.get("input") or {}
    hint = ""
    if isinstance(args, dict):
        for key in ("path", "command", "pattern", "message", "reason", "question", "ref"):
            value = args.get(key)
            if isinstance(value, str) and value:
                hint = value if len(value) <= 40 else value[:39] + "…"
                break
    return f"{call.get('name')}({hint})" if hint else str(call.get("name"))


def _input_problems(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in error.get("loc", ())) or "input"
        problems.append(f"{loc}: {error.get('msg', 'invalid')}")
    return f"Invalid input for {name}: " + "; ".join(problems) + ". Fix the input and call again."
