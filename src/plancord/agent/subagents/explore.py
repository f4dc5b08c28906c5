"""``explore``: a read-only sub-agent that answers one question for its parent.

Why this exists: an agent exploring a large repository wants to ask several questions in
parallel without filling its own context, and the sub-agents that do it must not become a
way around plan mode. So a sub-agent is a fresh conversation with only the read-only tools
(its tool list holds nothing else), every call of it passes the gate as if planning whatever
the parent's phase, and anything that would need a human (an ``ask``) is refused, never
waited on: it cannot write, enter or leave plan mode, ask a human, submit a plan or start
another sub-agent. Calls, tokens and time are bounded, and reaching a bound ends it with
a result saying which; its usage is recorded as the parent's, so it counts toward the
parent's plan cost and budget, and each of its model calls asks the plan's budget first (a
spent budget ends it with a result saying so). At most ``concurrency`` run at once in the
process, shared fairly between agents (``slots``): one more waits for a free slot (its line
says so), and its time limit starts when it runs. The
channel sees one line per sub-agent, edited as it works (``progress``). Stop and Cancel end
it between calls; a shutdown cancels it at once, and its line says so.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any

from pydantic import Field, ValidationError

from plancord.agent.budget import PlanBudget
from plancord.agent.dispatch import is_shell
from plancord.agent.subagents.progress import Progress
from plancord.agent.subagents.slots import FairSlots
from plancord.agent.tools.base import (
    AgentTools,
    StrictInput,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    hides_host,
    holds_read_only,
)
from plancord.core.agents import AgentRecord
from plancord.core.errors import PlancordError
from plancord.core.gate import GateOutcome, GateRequest, ToolKind, decide
from plancord.core.permissions import PermissionProfile, action_string
from plancord.core.planning import Phase
from plancord.core.ports import Clock, ModelClient, ModelRequest
from plancord.storage.conversations import ConversationStore

log = logging.getLogger(__name__)

NAME = "explore"
SYSTEM = (
    "You are a read-only explorer working for another agent. Answer its question by reading "
    "the workspace with the tools you have; you cannot change anything, ask a human, or plan. "
    "End with a concise, complete answer: it is all the other agent will see."
)


@dataclass(frozen=True, slots=True)
class ExploreLimits:
    model: str | None = None
    max_calls: int = 20
    max_tokens: int = 200_000
    timeout_seconds: float = 300.0
    concurrency: int = 4
    max_output_tokens: int = 4096


class ExploreInput(StrictInput):
    question: str = Field(min_length=1, max_length=8000)
    more_questions: list[Annotated[str, Field(min_length=1, max_length=8000)]] = Field(
        default_factory=list, max_length=7
    )
    """Further questions, each to a sub-agent of its own, all running at the same time."""


def sub_agent_may_use(tool: Tool[Any]) -> bool:
    """What a sub-agent's tool list holds: read-only tools and the read-only shell; never
    ``explore`` itself, the plan tools, ``ask_user`` or a mutating tool."""
    if tool.name == NAME:
        return False
    return tool.kind is ToolKind.READ_ONLY or (tool.kind is ToolKind.MUTATING and is_shell(tool))


class SubAgents:
    """Runs ``explore`` sub-agents; an ``AgentTools`` extension giving each agent the tool."""

    def __init__(
        self,
        *,
        model: ModelClient,
        conversations: ConversationStore,
        clock: Clock,
        model_for: Callable[[str, AgentRecord], str],
        limits: ExploreLimits,
        extensions: tuple[AgentTools, ...] = (),
        budget: PlanBudget | None = None,
    ) -> None:
        self.model = model
        self.conversations = conversations
        self.clock = clock
        self.model_for = model_for
        """The agent's own model (the runtime's choice), used unless ``limits.model``."""
        self.limits = limits
        self.budget = budget
        self._slots = FairSlots(limits.concurrency)
        self._numbers = itertools.count(1)
        self._extensions = extensions
        self._base: ToolRegistry | None = None
        self._tool = ExploreTool(self)

    def bind(self, registry: ToolRegistry) -> None:
        """The shared tools a sub-agent picks its read-only ones from."""
        self._base = ToolRegistry(
            [t for t in registry if sub_agent_may_use(t)], extensions=self._extensions
        )

    async def tools_for(self, agent: str) -> tuple[Tool[Any], ...]:
        return (self._tool,)

    async def explore(self, question: str, ctx: ToolContext) -> ToolResult:
        if self._base is None:
            return ToolResult.error("explore is not available: no tools were bound")
        number = next(self._numbers)
        registry = await self._base.for_agent(ctx.agent.name)
        tools = [t for t in registry if sub_agent_may_use(t)]
        progress = Progress(ctx.notifier, self.clock, ctx.agent.name, number, question)
        run = _Run(self, ctx, number, {t.name: t for t in tools}, progress)
        limit = self.limits.timeout_seconds
        try:
            if self._slots.would_wait(ctx.agent.name):
                await progress.waiting(self._slots.running)
            async with self._slots.slot(ctx.agent.name):
                try:
                    await progress.running()
                    async with asyncio.timeout(limit):
                        return await run.answer(question, registry.schemas(sub_agent_may_use))
                except TimeoutError:
                    await progress.stopped(f"its time limit ({limit:g} s)")
                    return ToolResult.error(
                        f"explore #{number} stopped at its time limit: no answer after "
                        f"{limit:g} s{run.partial()}"
                    )
        except asyncio.CancelledError:
            # Only a shutdown cancels a turn (Stop and Cancel end it between calls); the
            # parent's call is answered after the restart (``context.repair_history``).
            await progress.stopped("plancord stopped or restarted while it ran")
            raise


class _Run:
    """One sub-agent's conversation."""

    def __init__(
        self,
        owner: SubAgents,
        ctx: ToolContext,
        number: int,
        tools: dict[str, Tool[Any]],
        progress: Progress,
    ) -> None:
        self._owner = owner
        self._ctx = replace(ctx, phase=Phase.GATHERING, interactive=False, requester=None)
        self._number = number
        self._tools = tools
        self._progress = progress
        self._last_text = ""

    def partial(self) -> str:
        return f"; its last words: {self._last_text[:2000]}" if self._last_text else ""

    async def answer(self, question: str, schemas: list[dict[str, Any]]) -> ToolResult:
        owner = self._owner
        limits = owner.limits
        agent = self._ctx.agent
        model = limits.model or owner.model_for(agent.name, agent)
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": question}]}
        ]
        for _ in range(limits.max_calls):
            if self._ctx.stopped():
                return await self._stopped()
            spent = await owner.budget.spent(agent.name) if owner.budget is not None else None
            if spent is not None:
                await self._progress.stopped("the plan's budget is spent")
                return ToolResult.error(f"explore #{self._number} stopped: {spent}{self.partial()}")
            reply = await owner.model.create(
                ModelRequest(
                    model=model,
                    max_tokens=limits.max_output_tokens,
                    system=[{"type": "text", "text": SYSTEM}],
                    tools=schemas,
                    messages=messages,
                )
            )
            await owner.conversations.record_usage(
                self._ctx.agent.name, model, reply.usage, reply.stop_reason, owner.clock.now()
            )
            usage = reply.usage
            progress = self._progress
            progress.tokens += (
                usage.input_tokens
                + usage.cache_creation_input_tokens
                + usage.cache_read_input_tokens
                + usage.output_tokens
            )
            content = [b for b in reply.content if b.get("type") in ("text", "tool_use")]
            text = "\n".join(b["text"] for b in content if b.get("type") == "text").strip()
            self._last_text = text or self._last_text
            uses = [b for b in content if b.get("type") == "tool_use"]
            if not uses or reply.stop_reason != "tool_use":
                await progress.answered()
                return ToolResult(text or "(the sub-agent gave no answer)")
            if progress.tokens >= limits.max_tokens:
                await progress.stopped(f"its token limit ({limits.max_tokens:,})")
                return ToolResult.error(
                    f"explore #{self._number} stopped at its token limit: it used "
                    f"{progress.tokens:,} of its {limits.max_tokens:,} tokens without an "
                    f"answer{self.partial()}"
                )
            await progress.running()
            messages.append({"role": "assistant", "content": content})
            results = []
            for call in uses:
                if self._ctx.stopped():
                    return await self._stopped()
                result = await self._dispatch(call)
                progress.calls += 1
                await progress.running()
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": result.content or "(no output)",
                        **({"is_error": True} if result.is_error else {}),
                    }
                )
            messages.append({"role": "user", "content": results})
        await self._progress.stopped(f"its call limit ({limits.max_calls} model calls)")
        return ToolResult.error(
            f"explore #{self._number} stopped at its call limit: {limits.max_calls} model "
            f"calls without an answer{self.partial()}"
        )

    async def _stopped(self) -> ToolResult:
        await self._progress.stopped("its parent was stopped")
        return ToolResult.error(f"explore #{self._number} stopped: the agent was stopped")

    async def _dispatch(self, call: dict[str, Any]) -> ToolResult:
        """A sub-agent's call: only its read-only tools, through the gate as if planning;
        whatever would need a human is refused."""
        name = str(call.get("name"))
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.error(
                f"Refused: `{name}` is not available to an explore sub-agent; it may only "
                "read (it cannot write, enter or leave plan mode, ask a human, submit a plan "
                "or start another sub-agent)."
            )
        try:
            args = tool.Input.model_validate(call.get("input") or {})
        except ValidationError as exc:
            return ToolResult.error(f"Invalid input for {name}: {exc.error_count()} problem(s).")
        workspace = self._ctx.workspace
        policy = self._ctx.read_only_policy
        verdict = await asyncio.to_thread(
            tool.shell_verdict, args, workspace, (), holds_read_only(policy), hides_host(policy)
        )
        request = GateRequest(
            tool_name=name,
            tool_kind=tool.kind,
            action=action_string(name, tool.detail(args)),
            phase=Phase.GATHERING,
            entered_reason="explore sub-agent",
            shell_verdict_allowed=verdict.allowed if verdict else None,
            shell_verdict_reason=verdict.reason if verdict else None,
        )
        profile = PermissionProfile.from_stored(self._ctx.agent.permission_profile)
        decision = decide(request, profile)
        if decision.outcome is not GateOutcome.ALLOW:
            if decision.refusal is not None:
                return ToolResult.error(decision.refusal.to_text())
            return ToolResult.error(f"Refused: {decision.reason}.")
        try:
            return await tool.run(args, replace(self._ctx, verdict=verdict))
        except asyncio.CancelledError:
            raise
        except PlancordError as exc:
            return ToolResult.error(str(exc))
        except Exception as exc:
            log.exception("explore sub-agent: tool %s failed", name)
            return ToolResult.error(f"{name} failed: {type(exc).__name__}")


class ExploreTool(Tool[ExploreInput]):
    name = NAME
    description = (
        "Hand a question to a read-only sub-agent: a fresh conversation that reads the "
        "workspace (file tools, the read-only shell, read-only MCP tools) and returns its "
        "answer as this tool's result. Use it for broad searches you do not want in your own "
        "context; `more_questions` start further sub-agents that run at the same time. They "
        "cannot change anything or ask a human."
    )
    kind = ToolKind.READ_ONLY
    Input = ExploreInput

    def __init__(self, owner: SubAgents) -> None:
        self._owner = owner

    async def run(self, args: ExploreInput, ctx: ToolContext) -> ToolResult:
        questions = [args.question, *args.more_questions]
        if len(questions) == 1:
            return await self._owner.explore(args.question, ctx)
        results = await asyncio.gather(*(self._owner.explore(q, ctx) for q in questions))
        sections = [
            f"## Question {n}: {q[:200]}\n" + ("(failed) " if r.is_error else "") + r.content
            for n, (q, r) in enumerate(zip(questions, results, strict=True), start=1)
        ]
        return ToolResult("\n\n".join(sections), is_error=all(r.is_error for r in results))
