"""Read-only sub-agents, end to end: the real bot under SimCord, a scripted model playing
both the agent and the ``explore`` sub-agent it starts. The sub-agent may only read: every
attempt to write, to enter plan mode, to ask a human, to submit a plan or to start another
sub-agent is refused, and a Cancel of the agent stops it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plancord.agent.subagents.explore import SYSTEM
from plancord.core.cost import cost_of
from plancord.core.planning import Actor, Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import first_call, last_user
from tests.security.hostile import Hostile

QUESTION = "Where is the entry point?"
ATTEMPTS = [
    ToolCall("create_file", {"path": "owned.txt", "content": "x"}),
    ToolCall("bash_execute", {"command": "touch owned.txt"}),
    ToolCall("enter_plan_mode", {"reason": "take over"}),
    ToolCall("ask_user", {"question": "may I?"}),
    ToolCall("submit_plan", {"plan": {"summary": "x", "steps": []}}),
    ToolCall("explore", {"question": "again"}),
]


async def patient(hostile: Any, *args: Any, **options: Any) -> Hostile:
    """A hostile world whose SimCord waits long enough for real servers: an MCP server starts
    inside the sandbox, and on a loaded machine that alone can take seconds."""
    scene: Hostile = await hostile(*args, **options)
    scene.world.env.settle_timeout = 60.0
    return scene


def sub_agent_requests(scene: Hostile) -> list[dict[str, Any]]:
    return [r for r in scene.world.server.requests if r["system"][0]["text"] == SYSTEM]


def last_tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    content = last_user(request)["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


async def test_a_sub_agent_may_only_read_and_its_answer_is_the_tools_result(
    hostile: Any,
) -> None:
    script = [
        tool_turn(ToolCall("explore", {"question": QUESTION})),
        *(tool_turn(attempt) for attempt in ATTEMPTS),
        tool_turn(ToolCall("view", {"path": "README.md"})),
        text_turn("The entry point is app.py."),
        text_turn("done"),
    ]
    scene: Hostile = await patient(hostile, script, profile="open")
    await scene.ana.send(scene.channel, "find the entry point")

    subs = sub_agent_requests(scene)
    assert len(subs) == len(ATTEMPTS) + 2
    assert subs[0]["messages"][0]["content"][0]["text"] == QUESTION
    offered = {tool["name"] for tool in subs[0]["tools"]}
    assert {"view", "grep", "bash_execute"} <= offered
    assert not offered & {"create_file", "enter_plan_mode", "ask_user", "submit_plan", "explore"}
    for request in subs[1 : len(ATTEMPTS) + 1]:
        [result] = last_tool_results(request)
        assert result.get("is_error") is True, result
    [read] = last_tool_results(subs[-1])
    assert "is_error" not in read
    assert scene.tool_results() == ["The entry point is app.py."]
    assert not (scene.workspace / "owned.txt").exists()
    assert (await scene.app.store.load_state("ada")).phase is Phase.INACTIVE
    usage = await scene.app.conversations.usage("ada")
    assert len(usage) == len(scene.world.server.requests)
    [progress] = [t for t in scene.channel_texts() if "explore #" in t]
    assert progress.startswith(f"✅ explore #1: {QUESTION} — done · {len(ATTEMPTS) + 1} calls")


async def test_cancelling_the_agent_stops_its_sub_agent(hostile: Any) -> None:
    scene_box: list[Hostile] = []
    views = 3

    async def script(request: dict[str, Any]) -> Any:
        scene = scene_box[0]
        if request["system"][0]["text"] != SYSTEM:
            if len(sub_agent_requests(scene)) == 0:
                return tool_turn(ToolCall("explore", {"question": QUESTION}))
            return text_turn("stopping")
        if len(sub_agent_requests(scene)) == 2:
            ana = Actor.user(scene.ana.id, "ana")
            await scene.app.planning.cancel("ada", ana, "changed my mind")
        return tool_turn(*[ToolCall("view", {"path": "README.md"}) for _ in range(views)])

    scene: Hostile = await patient(hostile, script)
    scene_box.append(scene)
    await scene.ana.slash(scene.channel, "plan start", task="look around")

    assert len(sub_agent_requests(scene)) == 2
    assert (await scene.app.store.load_state("ada")).phase is Phase.INACTIVE
    texts = scene.channel_texts()
    assert any(t.startswith("⛔ explore #1: ") and "its parent was stopped" in t for t in texts)
    assert "Stopped." in texts


async def test_a_sub_agents_cost_counts_in_the_plans_cost(hostile: Any) -> None:
    prices = {"claude-sonnet-5-5": {"input": 3.0, "output": 15.0}}
    plan = {"summary": "Document the entry point", "steps": [{"description": "Write it down"}]}
    script = [
        tool_turn(ToolCall("explore", {"question": QUESTION})),
        text_turn("The entry point is app.py."),
        tool_turn(ToolCall("submit_plan", {"plan": plan})),
    ]
    scene: Hostile = await patient(hostile, script, config={"anthropic": {"prices": prices}})
    await scene.ana.slash(scene.channel, "plan start", task="document the entry point")

    state = await scene.app.store.load_state("ada")
    assert state.phase is Phase.SUBMITTED
    revision = await scene.app.store.get_revision(state.plan_id or "", 1)
    assert revision is not None
    calls = await scene.app.conversations.usage_between(
        "ada", state.entered_at, revision.submitted_at
    )
    assert len(calls) == len(scene.world.server.requests) == 3
    assert len(sub_agent_requests(scene)) == 1
    [card] = [
        m
        for m in scene.channel.history()
        if m.embeds and (m.embeds[0].title or "").startswith("Plan: ")
    ]
    description = card.embeds[0].description or ""
    expected = cost_of(calls, scene.app.config.anthropic.prices)
    assert expected is not None and expected.line() in description


async def test_several_sub_agents_run_at_the_same_time(hostile: Any) -> None:
    questions = ["Where are the tests?", "Where is the config?"]
    arrived = {q: asyncio.Event() for q in questions}

    async def script(request: dict[str, Any]) -> Any:
        if request["system"][0]["text"] != SYSTEM:
            if first_call(request):
                call = {"question": questions[0], "more_questions": questions[1:]}
                return tool_turn(ToolCall("explore", call))
            return text_turn("thanks")
        asked = request["messages"][0]["content"][0]["text"]
        arrived[asked].set()
        other = next(q for q in questions if q != asked)
        # Each sub-agent answers only once the other one has asked: one after the other,
        # they would never both answer.
        await asyncio.wait_for(arrived[other].wait(), timeout=4)
        return text_turn(f"answer to {asked}")

    scene: Hostile = await patient(hostile, script)
    await scene.ana.send(scene.channel, "look around")

    [result] = scene.tool_results()
    assert "## Question 1: Where are the tests?\nanswer to Where are the tests?" in result
    assert "## Question 2: Where is the config?\nanswer to Where is the config?" in result
    lines = sorted(t for t in scene.channel_texts() if "explore #" in t)
    assert [line.split(" — ")[0] for line in lines] == [
        "✅ explore #1: Where are the tests?",
        "✅ explore #2: Where is the config?",
    ]


async def test_one_agents_many_questions_leave_a_slot_for_another_agents_question(
    hostile: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two slots in the process. ``ada`` asks six questions: two sub-agents run, four wait.
    While they wait, ``other`` asks one. Its sub-agent takes the next slot that frees, ahead
    of ``ada``'s queue: one agent's questions never hold every slot while another's waits.
    ``ada``'s first two sub-agents answer only once ``other``'s live line says it waits."""
    ada_questions = [f"Where is part {n}?" for n in range(1, 7)]
    other_question = "Where are the other agent's notes?"
    started: list[str] = []
    other_waits = asyncio.Event()
    scene_box: list[Hostile] = []

    async def script(request: dict[str, Any]) -> Any:
        scene = scene_box[0]
        said = str(request["messages"])
        if request["system"][0]["text"] != SYSTEM:
            if not first_call(request):
                return text_turn("thanks")
            if "ADA-TASK" in said:
                call = {"question": ada_questions[0], "more_questions": ada_questions[1:]}
                return tool_turn(ToolCall("explore", call))
            return tool_turn(ToolCall("explore", {"question": other_question}))
        asked = request["messages"][0]["content"][0]["text"]
        started.append(asked)
        if asked == ada_questions[0]:
            # ada's sub-agents hold both slots and four more wait: now other is asked, through
            # the runtime as the message cog would (no SimCord action starts while ana's
            # message to ada is settling).
            ana = Actor.user(scene.ana.id, "ana")
            await scene.app.runtime.handle_message("other", "OTHER-TASK", ana)
        if asked in ada_questions and not other_waits.is_set():
            await asyncio.wait_for(other_waits.wait(), timeout=30)
        return text_turn(f"answer to {asked}")

    scene: Hostile = await patient(hostile, script, config={"explore": {"concurrency": 2}})
    scene_box.append(scene)
    lines = scene.world.bot.notifier.lines
    show = lines.show

    async def watch(agent: str, key: str, line: str, *, final: bool = False) -> None:
        await show(agent, key, line, final=final)
        if agent == "other" and "waiting for a free slot" in line:
            other_waits.set()

    monkeypatch.setattr(lines, "show", watch)
    await scene.ana.send(scene.channel, "ADA-TASK look around")
    await scene.app.runtime.wait_idle("other")

    assert sorted(started) == sorted([*ada_questions, other_question])
    assert started[:2] == ada_questions[:2], started
    position = started.index(other_question)
    assert position < len(ada_questions) - 2, f"other's question ran only at {position}: {started}"
    others = [r for r in scene.world.server.requests if "OTHER-TASK" in str(r["messages"])]
    [result] = last_tool_results(others[-1])
    assert f"answer to {other_question}" in str(result["content"])


async def test_without_a_sandbox_layer_a_sub_agent_cannot_read_beside_the_workspace(
    hostile: Any,
) -> None:
    """The read-only filter allows a read outside the workspace because the sandbox shows
    nothing there; with ``sandbox.layer: off`` nothing hides the host, so the sub-agent's
    shell refuses it as the agent's own does, and the host's file never reaches the model."""
    secret = "beside-the-workspace-explore-39"
    script = [
        tool_turn(ToolCall("explore", {"question": QUESTION})),
        tool_turn(ToolCall("bash_execute", {"command": "cat ../beside.txt"})),
        text_turn("nothing found"),
        text_turn("done"),
    ]
    scene: Hostile = await patient(
        hostile, script, profile="open", config={"sandbox": {"layer": "off"}}
    )
    (scene.workspace.parent / "beside.txt").write_text(secret)
    await scene.ana.send(scene.channel, "find the entry point")
    [sub] = sub_agent_requests(scene)[-1:]
    [result] = last_tool_results(sub)
    assert result.get("is_error") is True, result
    assert "no sandbox layer hides the host" in str(result["content"])
    seen = "\n".join(str(r["messages"]) for r in scene.world.server.requests)
    assert secret not in seen
