"""Who may instruct an agent, and roles by id: a member outside the access list is ignored and
told once; /plan start refuses them; a role id in the access list lets its members in; a
role that takes an approver role's *name* after startup grants nothing."""

from __future__ import annotations

from typing import Any

from plancord.core.planning import Phase
from tests.discord_bot.plans import PLAN, submitted_plan
from tests.fakes.anthropic_server import ToolCall, text_turn, tool_turn
from tests.requests_seen import last_user
from tests.world import PlanScene, private_answer


async def test_a_member_outside_the_access_list_is_ignored_and_told_once(
    plan_scene: Any,
) -> None:
    scene: PlanScene = await plan_scene([text_turn("hello")])
    before = len(scene.world.server.requests)

    await scene.bob.send(scene.channel, "delete everything")
    await scene.bob.send(scene.channel, "please?")

    assert len(scene.world.server.requests) == before
    notes = [t for t in scene.bot_texts() if "takes instructions only from" in t]
    assert len(notes) == 1
    assert "server administrators and its creator" in notes[0]
    refused = [a for a, _ in await scene.audit() if a == "instruct-refused"]
    assert refused == ["instruct-refused"]

    await scene.ana.send(scene.channel, "hi")
    assert len(scene.world.server.requests) == before + 1


async def test_plan_start_by_an_outsider_is_refused_privately(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([])
    result = await scene.bob.slash(scene.channel, "plan start", task="take over")
    answer = private_answer(result)
    assert "takes instructions only from" in answer.content
    assert (await scene.state()).phase is Phase.INACTIVE


async def test_a_role_id_in_the_access_list_lets_its_members_in(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene([text_turn("hello bob")])
    helpers = scene.guild.create_role("Helpers")
    carol = scene.guild.add_member(scene.env.create_user("carol"), roles=[helpers])
    record = await scene.app.store.get_agent("ada")
    await scene.app.store.update_agent(
        record.model_copy(update={"plan_mode_overrides": {"access": {"roles": [str(helpers.id)]}}})
    )
    before = len(scene.world.server.requests)
    await carol.send(scene.channel, "hi")
    assert len(scene.world.server.requests) == before + 1


async def test_everyone_opens_the_agent_to_every_member(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [text_turn("hello")], plan_mode={"access": {"everyone": True}}
    )
    before = len(scene.world.server.requests)
    await scene.bob.send(scene.channel, "hi")
    assert len(scene.world.server.requests) == before + 1


async def test_a_role_renamed_to_an_approver_roles_name_grants_nothing(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, PLAN, text_turn("On it."), plan_mode={"approver_roles": ["Maintainers"]}
    )
    maintainers = scene.guild.create_role("Maintainers")
    cara = scene.guild.add_member(scene.env.create_user("cara"), roles=[maintainers])
    await scene.world.bot.resolve_role_names()
    impostors = scene.guild.create_role("Maintainers")  # same name, made after startup
    mallory = scene.guild.add_member(scene.env.create_user("mallory"), roles=[impostors])
    message = scene.plan_message(1)

    refused = await mallory.click(message, label="Approve")
    assert refused.response.content.startswith("Only ")
    assert (await scene.state()).phase is Phase.SUBMITTED
    # The name now matches two roles, so it grants nothing: not the impostor, nor cara.
    voided = await cara.click(message, label="Approve")
    assert voided.response.content.startswith("Only ")
    assert (await scene.state()).phase is Phase.SUBMITTED


async def test_a_role_name_matching_several_roles_grants_nothing(plan_scene: Any) -> None:
    scene = await submitted_plan(
        plan_scene, PLAN, text_turn("On it."), plan_mode={"approver_roles": ["Ops"]}
    )
    first = scene.guild.create_role("Ops")
    scene.guild.create_role("Ops")
    dora = scene.guild.add_member(scene.env.create_user("dora"), roles=[first])
    await scene.world.bot.resolve_role_names()
    refused = await dora.click(scene.plan_message(1), label="Approve")
    assert refused.response.content.startswith("Only ")


async def test_only_instructors_answer_the_agents_questions(plan_scene: Any) -> None:
    scene: PlanScene = await plan_scene(
        [
            tool_turn(ToolCall("ask_user", {"question": "Which branch?"})),
            text_turn("thanks"),
        ]
    )
    await scene.ana.send(scene.channel, "ship it")
    await scene.bob.send(scene.channel, "main")
    assert scene.app.runtime.is_busy("ada")
    await scene.ana.send(scene.channel, "release")
    last = last_user(scene.world.server.requests[-1])["content"]
    result = next(b for b in last if b.get("type") == "tool_result")
    assert "release" in str(result["content"])
    assert "answered by ana" in str(result["content"])
