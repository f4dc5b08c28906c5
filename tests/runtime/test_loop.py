"""The tool loop's contract: stop reasons, bad tool input, permissions, caching, interjections."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from plancord.agent.runtime import RuntimeSettings
from plancord.core.planning import Actor, ApprovalMode, EntrySource, Phase, PlanRef
from tests.fakes.anthropic_server import (
    ToolCall,
    error_turn,
    max_tokens_turn,
    text_turn,
    tool_turn,
)
from tests.runtime.conftest import ANA, MODEL, Harness, first_call, last_user

PLAN = {"summary": "Write a file", "steps": [{"description": "Create a.txt", "risk": "low"}]}


async def test_end_turn_reply_is_said(make_harness: Any) -> None:
    harness: Harness = await make_harness([text_turn("Hello there")])
    await harness.say("hi")
    assert harness.channel.said == ["Hello there"]
    request = harness.server.requests[0]
    assert request["model"] == MODEL
    assert request["messages"][0]["content"][0]["text"] == "ana: hi"
    assert "Phase: normal" in harness.regime(0)


async def test_malformed_tool_input_becomes_an_error_result(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(
                ToolCall("view", {"path": 42}),
                ToolCall("view", {}),
                ToolCall("str_replace", {"path": "a", "old_str": "x", "new_str": "y", "bogus": 1}),
                ToolCall("no_such_tool", {"x": 1}),
                ToolCall("create_file", {"path": "../escape.txt", "content": "x"}),
            ),
            text_turn("sorry"),
        ]
    )
    await harness.say("go")
    results = harness.tool_results(1)
    assert all(r["is_error"] for r in results)
    assert "Invalid input for view: path" in results[0]["content"]
    assert "Invalid input for view: path" in results[1]["content"]
    assert "bogus" in results[2]["content"]
    assert "Unknown tool 'no_such_tool'" in results[3]["content"]
    assert "outside" in results[4]["content"].lower()
    assert not (harness.workspace.parent / "escape.txt").exists()
    assert harness.channel.said[-1] == "sorry"


async def test_several_tool_uses_are_answered_in_one_message(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(
                ToolCall("git_status", {}),
                ToolCall("git_log", {}),
                ToolCall("glob", {"pattern": "*"}),
            ),
            text_turn("done"),
        ]
    )
    await harness.say("status?")
    last = last_user(harness.server.requests[1])["content"]
    ids = [b["tool_use_id"] for b in last if b["type"] == "tool_result"]
    calls = [b["id"] for b in harness.server.responses[0]["content"] if b["type"] == "tool_use"]
    assert ids == calls
    assert harness.channel.activity_lines == ["git_status · git_log · glob(*)"]


async def test_refusal_stops_and_its_tool_calls_never_run(make_harness: Any) -> None:
    from tests.fakes.anthropic_server import Reply, Text

    harness: Harness = await make_harness(
        [
            Reply(
                blocks=(
                    Text("I won't"),
                    ToolCall("create_file", {"path": "r.txt", "content": "x"}),
                ),
                stop_reason="refusal",
            ),
            text_turn("next"),
        ]
    )
    await harness.say("do something bad")
    assert not (harness.workspace / "r.txt").exists()
    assert "The model declined to continue with this request." in harness.channel.said
    await harness.say("something else")
    assert harness.server.rejections == []
    assert len(harness.server.requests) == 2


async def test_max_tokens_continues_once_then_stops(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [max_tokens_turn("part one"), max_tokens_turn("part two"), text_turn("unused")]
    )
    await harness.say("write a lot")
    assert len(harness.server.requests) == 2
    assert "cut off at the output token limit" in json.dumps(harness.server.requests[1]["messages"])
    assert harness.channel.said == [
        "part one",
        "part two",
        "(The reply was cut off at the token limit.)",
    ]
    assert harness.server.rejections == []


async def test_model_api_failure_keeps_the_message(make_harness: Any) -> None:
    harness: Harness = await make_harness([error_turn(500), text_turn("back")])
    await harness.say("hello?")
    assert "model API is unavailable (500)" in harness.channel.said[0]
    await harness.say("retry")
    newest = last_user(harness.server.requests[1])
    texts = [b.get("text", "") for b in newest["content"]]
    assert "ana: hello?" in texts
    assert "ana: retry" in texts
    assert harness.channel.said[-1] == "back"


async def test_max_iterations_bound(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [tool_turn(ToolCall("git_status", {}))] * 3 + [text_turn("unused")],
        runtime_settings=RuntimeSettings(default_model=MODEL, max_iterations=3),
    )
    await harness.say("loop")
    assert len(harness.server.requests) == 3
    assert "Stopped after 3 model calls" in harness.channel.said[-1]


async def permission_harness(make_harness: Any, answers: list[bool | None]) -> Harness:
    harness: Harness = await make_harness(
        [tool_turn(ToolCall("bash_execute", {"command": "touch made.txt"})), text_turn("ok")],
        profile="standard",
    )
    harness.channel.permissions = answers
    await harness.say("make a file")
    return harness


async def test_permission_ask_granted(make_harness: Any) -> None:
    harness = await permission_harness(make_harness, [True])
    request = harness.channel.permission_requests[0]
    assert request.action == "tool:bash_execute:touch made.txt"
    assert request.requested_by == "42"
    assert (harness.workspace / "made.txt").exists()


async def test_permission_ask_denied(make_harness: Any) -> None:
    harness = await permission_harness(make_harness, [False])
    assert not (harness.workspace / "made.txt").exists()
    assert "denied permission" in harness.tool_results(1)[0]["content"]


async def test_permission_ask_timed_out_is_denied(make_harness: Any) -> None:
    harness = await permission_harness(make_harness, [None])
    assert not (harness.workspace / "made.txt").exists()
    assert "treated as denied" in harness.tool_results(1)[0]["content"]


async def test_read_only_shell_does_not_ask_under_standard(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [tool_turn(ToolCall("bash_execute", {"command": "ls"})), text_turn("ok")],
        profile="standard",
    )
    await harness.say("list")
    assert harness.channel.permission_requests == []
    assert harness.tool_results(1)[0].get("is_error") is None


async def test_locked_profile_denies_edits(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [tool_turn(ToolCall("create_file", {"path": "a.txt", "content": "x"})), text_turn("ok")],
        profile="locked",
    )
    await harness.say("write")
    assert "permission profile denies" in harness.tool_results(1)[0]["content"]
    assert not (harness.workspace / "a.txt").exists()


async def test_confirm_each_edit_asks_for_every_mutation(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("enter_plan_mode", {"reason": "x"})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            tool_turn(
                ToolCall("create_file", {"path": "a.txt", "content": "x"}),
                ToolCall("view", {"path": "a.txt"}),
            ),
            text_turn("done"),
        ]
    )
    await harness.say("write a.txt")
    harness.channel.permissions = [True]
    revision = await harness.service.current_revision("ada")
    assert revision is not None
    await harness.service.approve(
        PlanRef(agent="ada", plan_id=revision.plan_id, revision=1),
        ANA,
        ApprovalMode.CONFIRM_EACH_EDIT,
    )
    await harness.runtime.wait_idle("ada")
    assert [r.tool_name for r in harness.channel.permission_requests] == ["create_file"]
    assert (harness.workspace / "a.txt").exists()


async def test_cache_reads_within_a_phase_and_across_a_transition(make_harness: Any) -> None:
    harness: Harness = await make_harness(
        [
            tool_turn(ToolCall("git_status", {})),
            tool_turn(ToolCall("enter_plan_mode", {"reason": "plan"})),
            tool_turn(ToolCall("git_log", {})),
            text_turn("ok"),
        ]
    )
    await harness.say("go")
    usages = harness.server.usages
    assert usages[0].cache_read_input_tokens == 0
    assert usages[0].cache_creation_input_tokens > 0
    assert usages[1].cache_read_input_tokens > 0
    tools = [r["tools"] for r in harness.server.requests]
    system = [r["system"] for r in harness.server.requests]
    assert all(t == tools[0] for t in tools)
    assert all(s == system[0] for s in system)
    prefix = usages[0].cache_creation_input_tokens
    assert usages[2].cache_read_input_tokens >= prefix
    assert usages[3].cache_read_input_tokens >= usages[2].cache_read_input_tokens
    stored = await harness.conversations.usage("ada")
    assert [u.cache_read_input_tokens for u in stored] == [
        u.cache_read_input_tokens for u in usages
    ]


async def test_filter_visibility_hides_refused_tools_by_instruction(make_harness: Any) -> None:
    """``tool_visibility: filter`` never changes ``tools`` (a thinking block is bound to
    them): the regime names what is not available while planning, the gate refuses it."""
    harness: Harness = await make_harness(
        [text_turn("looking"), text_turn("done")],
        plan_mode={"tool_visibility": "filter"},
    )
    await harness.say("hello")
    await harness.service.enter("ada", source=EntrySource.USER, actor=ANA, task="plan it")
    await harness.say("go")
    before, after = (request["tools"] for request in harness.server.requests)
    assert before == after
    assert "create_file" in {t["name"] for t in after}
    assert "Not available while planning" not in harness.regime(0)
    hidden = harness.regime(1).split("Not available while planning (refused if called): ")[1]
    names = hidden.split("\n")[0].split(", ")
    assert "create_file" in names and "str_replace" in names
    assert "bash_execute" not in names and "submit_plan" not in names


async def test_messages_during_a_turn_join_it(make_harness: Any) -> None:
    release = asyncio.Event()

    async def script(request: dict[str, Any]) -> Any:
        if first_call(request):
            await release.wait()
            return tool_turn(ToolCall("git_status", {}))
        return text_turn("got both")

    harness: Harness = await make_harness(script)
    await harness.runtime.handle_message("ada", "first", ANA)
    await asyncio.sleep(0.05)
    await harness.runtime.handle_message("ada", "also this", Actor.user(7, "bob"))
    release.set()
    await harness.runtime.wait_idle("ada")
    second = last_user(harness.server.requests[1])["content"]
    texts = [b.get("text") for b in second if b["type"] == "text"]
    assert "bob: also this" in texts
    assert harness.channel.said == ["got both"]


async def test_stop_ends_the_loop_between_tool_calls(make_harness: Any) -> None:
    release = asyncio.Event()

    async def script(request: dict[str, Any]) -> Any:
        await release.wait()
        return tool_turn(ToolCall("git_status", {}))

    harness: Harness = await make_harness(script)
    await harness.runtime.handle_message("ada", "loop forever", ANA)
    await asyncio.sleep(0.05)
    assert await harness.runtime.stop("ada") is True
    release.set()
    await harness.runtime.wait_idle("ada")
    assert len(harness.server.requests) == 1
    assert harness.channel.said[-1] == "Stopped."
    assert await harness.runtime.stop("ada") is False


async def test_plan_cancel_stops_a_running_loop(make_harness: Any) -> None:
    release = asyncio.Event()

    async def script(request: dict[str, Any]) -> Any:
        if first_call(request):
            return tool_turn(ToolCall("enter_plan_mode", {"reason": "x"}))
        await release.wait()
        return tool_turn(ToolCall("git_status", {}))

    harness: Harness = await make_harness(script)
    await harness.runtime.handle_message("ada", "plan it", ANA)
    for _ in range(100):
        if (await harness.store.load_state("ada")).phase is Phase.GATHERING:
            break
        await asyncio.sleep(0.01)
    await harness.service.cancel("ada", ANA, "changed my mind")
    release.set()
    await harness.runtime.wait_idle("ada")
    assert len(harness.server.requests) == 2
    assert harness.channel.said[-1] == "Stopped."
    history = json.dumps(await harness.conversations.load("ada"))
    assert "Planning was cancelled by ana: changed my mind" in history


async def test_coordinators_start_new_tasks_in_plan_mode(make_harness: Any) -> None:
    harness: Harness = await make_harness([text_turn("planning")], role="coordinator")
    await harness.say("refactor everything")
    state = await harness.store.load_state("ada")
    assert state.phase is Phase.GATHERING
    assert state.requested_by == "42"
    assert "Phase: plan mode — gathering" in harness.regime(0)


async def test_compaction_keeps_the_request_valid_and_the_regime(make_harness: Any) -> None:
    def script(request: dict[str, Any]) -> Any:
        if not request.get("tools"):
            return text_turn("SUMMARY: the user asked about files.")
        return text_turn("reply " + "z" * 300)

    harness: Harness = await make_harness(
        script,
        runtime_settings=RuntimeSettings(
            default_model=MODEL,
            context_window_tokens=6000,
            compact_at_fraction=0.5,
            keep_recent_fraction=0.1,
        ),
    )
    for i in range(12):
        await harness.say(f"message {i} " + "y" * 400)
    assert harness.server.rejections == []
    summaries = [r for r in harness.server.requests if not r.get("tools")]
    assert summaries
    history = await harness.conversations.load("ada")
    assert "Summary of the earlier conversation" in json.dumps(history[0])
    assert len(json.dumps(history)) < 6000 * 4
    # The compacted conversation is asserted the regime again (kept turns carry none).
    compacted = harness.server.requests[-1]["messages"]
    assert "Summary of the earlier conversation" in json.dumps(compacted[0])
    assert "<plancord-regime>" in json.dumps(compacted[2:])
