"""Billed input tokens of one scripted plan cycle: regime placement and tool visibility.

Why: the design keeps the system prompt and the tool list identical in every phase and puts
the plan-mode regime in the newest user turn, after the last cache breakpoint, so that
Anthropic's prompt cache survives every transition. This script measures what that buys.

Run with ``.venv/bin/python benchmarks/bench_cost.py``. The same 20-call script (enter plan
mode, explore about 30 KB of generated source with view/glob/grep/shell, submit, get approved,
edit, commit, update the steps, complete) is played by the fake Messages API, which simulates
prompt caching with the real API's 1,024-token minimum, against four request builders:

* ``stable``: the runtime as shipped (``plan_mode.tool_visibility: stable``);
* ``filter``: the same with ``tool_visibility: filter`` (refused tools hidden while planning);
* ``naive``: the regime (phase, plan, step status) appended to the system prompt and no cache
  breakpoint after the system prompt;
* ``naive+history``: the regime in the system prompt but the runtime's history breakpoints
  kept, to separate the two effects.

Billed input is ``input + 1.25 x cache writes + 0.1 x cache reads`` per call, summed over the
cycle. Goal: ``stable`` at most 50% of ``naive``. Token counts are deterministic, so one run of
each variant is the measurement.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from _common import ANA, MODEL, Bench, open_bench

# isort: split

from tests.append_only import AppendOnly, check_append_only
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, ToolCall, text_turn, tool_turn

from plancord.agent.context import (
    regime_text,
    repair_history,
    settle_edit,
    system_blocks,
    without_thinking,
)
from plancord.agent.requests import ModelRequests
from plancord.agent.runtime import RuntimeSettings
from plancord.core.agents import AgentRecord
from plancord.core.planning import Phase, PlanRef
from plancord.core.ports import ModelRequest, ModelUsage
from plancord.llm.anthropic_client import AnthropicModelClient

GOAL = 0.25
MODULES = ("cart", "checkout", "pricing", "models", "inventory", "shipping")

PLAN = {
    "summary": "Add discount codes to checkout",
    "steps": [
        {
            "description": "Create src/shop/codes.py with a DiscountCode model and lookup",
            "tools": ["create_file"],
            "risk": "low",
        },
        {
            "description": "Apply the code in checkout.total() before tax",
            "tools": ["str_replace"],
            "risk": "medium",
        },
        {
            "description": "Compile every module and commit",
            "tools": ["bash_execute", "git_commit"],
            "risk": "low",
        },
    ],
    "questions": ["Should codes stack with member prices?"],
    "context_notes": "Prices are integer cents; totals are computed in checkout.total().",
}

CODES_PY = '''"""Discount codes: a percentage off the subtotal, looked up by code."""

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DiscountCode:
    code: str
    percent: int


CODES = {"WELCOME10": DiscountCode("WELCOME10", 10)}


def lookup(code: str) -> DiscountCode | None:
    return CODES.get(code.strip().upper())
'''


def module_source(name: str, index: int) -> str:
    """About 5 KB of plausible Python, different per module."""
    functions = []
    for number in range(18):
        functions.append(
            textwrap.dedent(
                f'''
                def {name}_rule_{number}(items: list[dict[str, int]], factor: int = {number}):
                    """Rule {number} of the {name} module: weigh each item, sum the cents."""
                    total = 0
                    for item in items:
                        total += item.get("cents", 0) * factor // {index + 3}
                    return total
                '''
            )
        )
    head = f'"""The {name} module of the demo shop; prices are integer cents."""\n'
    body = "".join(functions)
    if name == "checkout":
        body += textwrap.dedent(
            """
            def total(cart: dict[str, int], code: str | None = None) -> int:
                subtotal = sum(cart.values())
                return subtotal
            """
        )
    return head + body


def write_workspace(workspace: Path) -> int:
    """Generate the shop sources, commit them, and return their size in bytes."""
    package = workspace / "src" / "shop"
    package.mkdir(parents=True)
    size = 0
    for index, name in enumerate(MODULES):
        text = module_source(name, index)
        (package / f"{name}.py").write_text(text)
        size += len(text.encode())
    (workspace / "README.md").write_text("# shop\nA demo shop; see src/shop.\n")
    for argv in (["git", "add", "-A"], ["git", "commit", "-q", "-m", "The demo shop"]):
        subprocess.run(argv, cwd=workspace, check=True, capture_output=True)
    return size


def script() -> list[Reply]:
    """Twenty model calls: ten while planning, ten executing the approved plan."""
    return [
        tool_turn(ToolCall("enter_plan_mode", {"reason": "checkout changes touch several files"})),
        tool_turn(ToolCall("glob", {"pattern": "**/*.py"})),
        tool_turn(ToolCall("view", {"path": "src/shop/checkout.py"})),
        tool_turn(ToolCall("view", {"path": "src/shop/cart.py"})),
        tool_turn(ToolCall("grep", {"pattern": "def .*_rule_1", "path": "src"})),
        tool_turn(ToolCall("view", {"path": "src/shop/pricing.py"})),
        tool_turn(ToolCall("view", {"path": "src/shop/models.py"})),
        tool_turn(ToolCall("bash_execute", {"command": "wc -c src/shop/*.py && git log"})),
        tool_turn(ToolCall("view", {"path": "src/shop/inventory.py"})),
        tool_turn(ToolCall("submit_plan", {"plan": PLAN}), text="Here is the plan."),
        tool_turn(ToolCall("update_plan_step", {"step": 1, "status": "in_progress"})),
        tool_turn(ToolCall("create_file", {"path": "src/shop/codes.py", "content": CODES_PY})),
        tool_turn(
            ToolCall("update_plan_step", {"step": 1, "status": "done"}),
            ToolCall("update_plan_step", {"step": 2, "status": "in_progress"}),
        ),
        tool_turn(
            ToolCall(
                "str_replace",
                {
                    "path": "src/shop/checkout.py",
                    "old_str": "    return subtotal\n",
                    "new_str": "    found = lookup(code) if code else None\n"
                    "    return subtotal * (100 - found.percent) // 100 if found else subtotal\n",
                },
            )
        ),
        tool_turn(ToolCall("update_plan_step", {"step": 2, "status": "done"})),
        tool_turn(ToolCall("bash_execute", {"command": "python3 -m py_compile src/shop/*.py"})),
        tool_turn(ToolCall("git_commit", {"message": "Discount codes at checkout"})),
        tool_turn(ToolCall("update_plan_step", {"step": 3, "status": "done"})),
        tool_turn(ToolCall("complete_plan", {"summary": "Discount codes apply at checkout."})),
        text_turn("Done: discount codes are applied at checkout and committed."),
    ]


class RegimeInSystemRequests(ModelRequests):
    """The naive request: the regime appended to the system prompt, rebuilt every call, and
    the history unmarked. A system prompt that changes invalidates every thinking block
    sent back, so the naive request leaves them out (as it must to be accepted at all)."""

    automatic_cache = False

    async def prepare(self, agent: str, record: AgentRecord) -> None:
        history = await self.conversations.load(agent)
        fixed, changed = repair_history(history)
        if changed:
            start, tail = settle_edit(history, fixed)
            await self.conversations.replace_tail(agent, start, tail, self.now())

    async def build_request(self, agent: str, record: AgentRecord | None = None) -> ModelRequest:
        record = record or await self.store.get_agent(agent)
        status = await self.planning.status(agent)
        history = await self.conversations.load(agent)
        system = system_blocks(record.system_prompt)
        tools = await self.planning_tools(agent, status.state.phase.is_planning)
        system[0]["text"] += "\n\n" + regime_text(status.state, status.revision, tools)
        return ModelRequest(
            model=record.model or self.settings.default_model,
            max_tokens=self.settings.max_tokens,
            system=system,
            tools=await self.tool_schemas(agent),
            messages=without_thinking(history),
            cache_control={"type": "ephemeral"} if self.automatic_cache else None,
        )


class RegimeInSystemWithAutomaticCacheRequests(RegimeInSystemRequests):
    automatic_cache = True


class RegimeInSystemDroppingRequests(RegimeInSystemRequests):
    """The naive request keeping the thinking blocks, and asking the API to drop the ones
    its changed system prompt invalidated (``drop_block``): accepted, and billed for them."""

    async def build_request(self, agent: str, record: AgentRecord | None = None) -> ModelRequest:
        record = record or await self.store.get_agent(agent)
        naive = await super().build_request(agent, record)
        thinking, _, betas = self.settings.thinking.request_fields(
            naive.model, self.settings.agents.get(agent), drop_mismatched_thinking=True
        )
        history = await self.conversations.load(agent)
        return replace(naive, messages=history, thinking=thinking, betas=betas)


@dataclass(frozen=True)
class Variant:
    name: str
    plan_mode: dict[str, Any]
    requests_class: type[ModelRequests]


VARIANTS = (
    Variant("stable", {"tool_visibility": "stable"}, ModelRequests),
    Variant("filter", {"tool_visibility": "filter"}, ModelRequests),
    Variant("naive", {"tool_visibility": "stable"}, RegimeInSystemRequests),
    Variant("naive+cache", {"tool_visibility": "stable"}, RegimeInSystemWithAutomaticCacheRequests),
    Variant("naive+drop", {"tool_visibility": "stable"}, RegimeInSystemDroppingRequests),
)


@dataclass(frozen=True)
class Outcome:
    usages: list[ModelUsage]
    workspace_bytes: int
    tool_result_bytes: int
    append_only: AppendOnly
    thinking_replies: int

    def hit_rates(self) -> list[float]:
        """Per call: the share of its input read from the cache."""
        rates = []
        for u in self.usages:
            total = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
            rates.append(u.cache_read_input_tokens / total if total else 0.0)
        return rates

    @property
    def billed(self) -> float:
        return sum(u.billed_input() for u in self.usages)

    def total(self, field: str) -> int:
        return sum(int(getattr(u, field)) for u in self.usages)


async def play(variant: Variant, directory: Path) -> Outcome:
    server = await FakeAnthropicServer(script()).start()
    model = AnthropicModelClient(api_key="bench-key", base_url=server.url, max_retries=0)
    bench: Bench | None = None
    try:
        bench = await open_bench(
            directory,
            model,
            plan_mode=variant.plan_mode,
            requests_class=variant.requests_class,
            runtime_settings=RuntimeSettings(default_model=MODEL),
        )
        explored = write_workspace(bench.runtime.workspace_of("ada"))
        await bench.runtime.handle_message("ada", "please add discount codes to checkout", ANA)
        await bench.runtime.wait_idle("ada")
        revision = await bench.service.current_revision("ada")
        if revision is None:
            raise RuntimeError(f"{variant.name}: no plan was submitted; said {bench.channel.said}")
        ref = PlanRef(agent="ada", plan_id=revision.plan_id, revision=revision.revision)
        await bench.service.approve(ref, ANA)
        await bench.runtime.wait_idle("ada")
        await check_cycle(variant, bench, server)
        results = sum(
            len(str(block.get("content", "")).encode())
            for request in server.requests
            for message in request["messages"][-2:]
            for block in message["content"]
            if block.get("type") == "tool_result"
        )
        thinking = sum(
            1 for r in server.responses if any(b["type"] == "thinking" for b in r["content"])
        )
        return Outcome(
            await bench.conversations.usage("ada"),
            explored,
            results,
            check_append_only(server.requests, server.responses),
            thinking,
        )
    finally:
        if bench is not None:
            await bench.close()
        await model.close()
        await server.stop()


async def check_cycle(variant: Variant, bench: Bench, server: FakeAnthropicServer) -> None:
    """The figures only count if the whole cycle ran exactly as scripted."""
    problems = []
    if server.rejections:
        problems.append(f"the API rejected a request: {server.rejections[0].message}")
    if len(server.requests) != 20 or server.script_exhausted:
        problems.append(f"{len(server.requests)} model calls instead of 20")
    if (await bench.store.load_state("ada")).phase is not Phase.INACTIVE:
        problems.append("the plan was not completed")
    checkout = bench.runtime.workspace_of("ada") / "src" / "shop" / "checkout.py"
    if "lookup(code)" not in checkout.read_text():
        problems.append("the approved edit was not made")
    errors = [
        block
        for request in server.requests
        for message in request["messages"][-2:]
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("is_error")
    ]
    if errors:
        problems.append(f"a tool failed: {errors[0]['content'][:200]}")
    if problems:
        raise RuntimeError(f"{variant.name}: " + "; ".join(problems))


async def main() -> int:
    outcomes: dict[str, Outcome] = {}
    for variant in VARIANTS:
        with tempfile.TemporaryDirectory(prefix="plancord-bench-cost-") as directory:
            outcomes[variant.name] = await play(variant, Path(directory))
    naive = outcomes["naive"].billed
    stable = outcomes["stable"]
    print(
        f"One plan cycle, 20 model calls on {MODEL} over a {stable.workspace_bytes / 1000:.1f} KB "
        f"workspace ({stable.tool_result_bytes / 1000:.1f} KB of tool results); fake API with "
        f"prompt caching at the model's own minimum and a thinking block in "
        f"{stable.thinking_replies} of 20 replies."
    )
    header = f"{'variant':<14}{'input':>9}{'cache write':>13}{'cache read':>12}"
    print(header + f"{'billed input':>14}{'vs naive':>10}{'append-only':>13}")
    for name, outcome in outcomes.items():
        check = outcome.append_only
        verdict = f"{len(check.violations)} viol."
        print(
            f"{name:<14}{outcome.total('input_tokens'):>9,}"
            f"{outcome.total('cache_creation_input_tokens'):>13,}"
            f"{outcome.total('cache_read_input_tokens'):>12,}"
            f"{outcome.billed:>14,.0f}{outcome.billed / naive:>10.1%}{verdict:>13}"
        )
    for name in ("stable", "filter"):
        rates = " ".join(f"{rate:.0%}" for rate in outcomes[name].hit_rates())
        print(f"cache hit rate per call, {name}: {rates}")
    ratio = outcomes["stable"].billed / naive
    violations = len(stable.append_only.violations) + len(outcomes["filter"].append_only.violations)
    goal = "met" if ratio <= GOAL and violations == 0 else "NOT met"
    print(f"stable / naive = {ratio:.3f} (goal <= {GOAL:.2f}, append-only: {goal})")
    print(f"filter / stable = {outcomes['filter'].billed / outcomes['stable'].billed:.3f}")
    print(f"stable / naive+drop = {stable.billed / outcomes['naive+drop'].billed:.3f}")
    return 0 if goal == "met" else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
