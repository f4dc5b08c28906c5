"""The bounds of an ``explore`` sub-agent, through the real bot under SimCord: reaching its
call or token limit ends it with a result that names the limit (and its line says so), and
one sub-agent more than ``explore.concurrency`` waits for a free slot, its line saying so,
and runs once one is free: the sub-agents never interleave. Its tokens count toward the
parent's plan budget. (The time limit is tested in
``tests/agent/test_explore_time_limit.py``: SimCord fires a timer only once the bot is
idle, and a bot waiting on the model is not.)"""

from __future__ import annotations

from typing import Any

from plancord.agent.subagents.explore import NAME
from plancord.core.planning import Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.discord_bot.exploring import QUESTION, is_sub_agent, lines, posts_of_lines
from tests.discord_bot.plans import submitted_plan
from tests.requests_seen import first_call
from tests.world import PlanScene

GLOB = ToolCall("glob", {"pattern": "*"})
SUB_CALLS = 10


def explore_result(scene: PlanScene) -> dict[str, Any]:
    """The parent's result of its one explore call."""
    parent = [r for r in scene.world.server.requests if not is_sub_agent(r)][-1]
    [result] = [
        b
        for m in parent["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    return result


def endless(question: str = QUESTION, more: tuple[str, ...] = ()) -> Any:
    """A parent that asks, and a sub-agent that never stops calling tools."""

    async def script(request: dict[str, Any]) -> Any:
        if not is_sub_agent(request):
            if first_call(request):
                call = {"question": question, "more_questions": list(more)}
                return tool_turn(ToolCall(NAME, call))
            return text_turn("noted")
        return tool_turn(GLOB)

    return script


def subs(scene: PlanScene) -> list[dict[str, Any]]:
    return [r for r in scene.world.server.requests if is_sub_agent(r)]


async def test_the_call_limit_ends_the_sub_agent_with_a_result_saying_so(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene(endless(), config={"explore": {"max_calls": 3}})

    await scene.ana.send(scene.channel, "find the entry point")

    assert len(subs(scene)) == 3
    result = explore_result(scene)
    assert result["is_error"] is True
    assert result["content"].startswith(
        "explore #1 stopped at its call limit: 3 model calls without an answer"
    )
    [line] = lines(scene)
    assert line.content.startswith(
        f"⛔ explore #1: {QUESTION} — stopped: its call limit (3 model calls) · 3 calls"
    )


async def test_the_token_limit_ends_the_sub_agent_with_a_result_saying_so(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene(endless(), config={"explore": {"max_tokens": 50}})

    await scene.ana.send(scene.channel, "find the entry point")

    assert len(subs(scene)) == 1, "a sub-agent past its tokens made another call"
    result = explore_result(scene)
    assert result["is_error"] is True
    assert result["content"].startswith("explore #1 stopped at its token limit: it used ")
    assert "of its 50 tokens without an answer" in result["content"]
    [line] = lines(scene)
    assert line.content.startswith(f"⛔ explore #1: {QUESTION} — stopped: its token limit (50)")


async def test_one_sub_agent_more_than_the_concurrency_waits_for_a_free_slot(
    plan_scene: Any,
) -> None:
    questions = ("Where are the tests?", "Where is the config?")
    order: list[str] = []

    async def script(request: dict[str, Any]) -> Any:
        if not is_sub_agent(request):
            if first_call(request):
                call = {"question": questions[0], "more_questions": list(questions[1:])}
                return tool_turn(ToolCall(NAME, call))
            return text_turn("thanks")
        asked = request["messages"][0]["content"][0]["text"]
        order.append(asked)
        if first_call(request):
            return tool_turn(GLOB)
        return text_turn(f"answer to {asked}")

    scene: PlanScene = await plan_scene(script, config={"explore": {"concurrency": 1}})
    await scene.ana.send(scene.channel, "look around")

    first, second = order[0], order[2]
    assert order == [first, first, second, second], "the two sub-agents ran at the same time"
    result = explore_result(scene)
    for question in questions:
        assert f"{question}\nanswer to {question}" in result["content"]
    waited = [p for p in posts_of_lines(scene) if p.startswith("⏳")]
    assert len(waited) == 1 and " — waiting for a free slot (1 running)" in waited[0]
    assert second in waited[0]
    assert sorted(line.content.split(" — ")[0] for line in lines(scene)) == [
        f"✅ explore #1: {questions[0]}",
        f"✅ explore #2: {questions[1]}",
    ]


async def test_a_sub_agents_tokens_count_toward_the_plans_budget(plan_scene: Any) -> None:
    """Executing, the sub-agent's calls spend the plan's budget and each asks it first: the
    sub-agent stops once it is spent, and so does execution."""
    plan = {"summary": "Write a note", "steps": [{"description": "Write it", "files": ["n.md"]}]}
    execution = [
        tool_turn(ToolCall(NAME, {"question": QUESTION})),
        *[tool_turn(GLOB) for _ in range(SUB_CALLS)],
        text_turn("It is app.py."),
        tool_turn(ToolCall("create_file", {"path": "n.md", "content": "note\n"})),
        text_turn("Done."),
    ]
    scene = await submitted_plan(plan_scene, plan, *execution)
    usage = await scene.app.conversations.usage("ada")
    so_far = int(sum(u.billed_input() + u.output_tokens for u in usage))
    last = usage[-1].billed_input() + usage[-1].output_tokens
    # Room for the parent's next call (at most its last one's size and a quarter more, were
    # it all written to the cache), not for that call and its sub-agent's calls too.
    record = await scene.app.store.get_agent("ada")
    budget = {"budget_tokens": int(so_far + 2 * last)}
    await scene.app.store.update_agent(record.model_copy(update={"plan_mode_overrides": budget}))

    await scene.ana.click(scene.plan_message(1), label="Approve")
    await scene.app.runtime.wait_idle("ada")

    assert 1 < len(subs(scene)) < SUB_CALLS + 1, "the sub-agent did not stop at the budget"
    spent = await scene.app.conversations.usage("ada")
    sub_agent = sum(u.billed_input() + u.output_tokens for u in spent[len(usage) + 1 :])
    assert sub_agent > 2 * last, "the sub-agent spent too little to tell"
    assert not (scene.app.manager.workspace_of("ada") / "n.md").exists()
    assert (await scene.state()).phase is Phase.INACTIVE
    assert any(t.startswith("💸 Execution stopped") for t in scene.bot_texts())


async def test_eight_questions_stop_at_the_plans_budget_while_planning(plan_scene: Any) -> None:
    """Planning with a token budget, the agent asks eight questions whose sub-agents keep
    reading: every sub-agent call asks the plan's budget first, so once it is spent no new
    call starts (only those in flight finish), each sub-agent says why it stopped, and the
    agent's own next call is not made either."""
    budget, concurrency = 40_000, 4
    more = tuple(f"Where is part {n}?" for n in range(2, 9))
    scene: PlanScene = await plan_scene(
        endless(more=more),
        plan_mode={"budget_tokens": budget},
        config={"explore": {"concurrency": concurrency}},
    )
    await scene.ana.slash(scene.channel, "plan start", task="map the repository")
    await scene.app.runtime.wait_idle("ada")

    used = 0
    after = 0
    for call in await scene.app.conversations.usage("ada"):
        if used >= budget:
            after += 1
        used += call.billed_input() + call.output_tokens
    assert used >= budget, "the sub-agents spent too little to tell"
    assert after <= concurrency, f"{after} model calls started after the budget was spent"
    assert len(subs(scene)) < 8 * 20
    stored = await scene.app.conversations.load("ada")
    [result] = [b for b in stored[-1]["content"] if b.get("type") == "tool_result"]
    assert "stopped: the plan's budget of 40.0k tokens is spent" in result["content"]
    assert not any(r["messages"] == stored for r in scene.world.server.requests)
    assert any(t.startswith("💸 Planning paused") for t in scene.bot_texts())
    assert (await scene.state()).phase is Phase.GATHERING
