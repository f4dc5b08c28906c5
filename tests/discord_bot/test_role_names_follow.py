"""Role names in the config follow the server: a role created, renamed or deleted after the
bot started changes what the name grants at once, through the real gateway events under
SimCord, and a name matching several roles grants nothing."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from plancord.core.planning import Phase
from tests.discord_bot.plans import PLAN, submitted_plan
from tests.fakes.anthropic_server import text_turn
from tests.world import PlanScene

APPROVERS = {"approver_roles": ["Maintainers"]}


async def scene_with_approver_name(plan_scene: Any) -> PlanScene:
    """ada has submitted v1; the config names "Maintainers", which no role has yet."""
    return await submitted_plan(plan_scene, PLAN, text_turn("On it."), plan_mode=APPROVERS)


async def approves(scene: PlanScene, member: Any) -> bool:
    result = await member.click(scene.plan_message(1), label="Approve")
    return str(result.response.content).startswith("Approved plan v1")


async def test_a_role_created_after_start_grants_without_a_restart(plan_scene: Any) -> None:
    scene = await scene_with_approver_name(plan_scene)
    cara = scene.guild.add_member(scene.env.create_user("cara"))
    assert not await approves(scene, cara)

    maintainers = scene.guild.create_role("Maintainers")
    await scene.env.settle()
    dora = scene.guild.add_member(scene.env.create_user("dora"), roles=[maintainers])

    assert await approves(scene, dora)
    assert (await scene.state()).phase is Phase.EXECUTING


async def test_a_rename_moves_the_grant_and_a_second_role_of_the_name_voids_it(
    plan_scene: Any,
) -> None:
    scene = await scene_with_approver_name(plan_scene)
    ops = scene.guild.create_role("Ops")
    dora = scene.guild.add_member(scene.env.create_user("dora"), roles=[ops])
    await scene.env.settle()
    assert not await approves(scene, dora)

    scene.env.backend.edit_role(scene.guild.id, ops.id, {"name": "Maintainers"})
    impostor = scene.guild.create_role("Maintainers")  # now two roles answer to the name
    mallory = scene.guild.add_member(scene.env.create_user("mallory"), roles=[impostor])
    await scene.env.settle()
    assert not await approves(scene, mallory)
    assert not await approves(scene, dora)

    scene.env.backend.delete_role(scene.guild.id, impostor.id)  # one role again: dora's
    await scene.env.settle()
    assert await approves(scene, dora)


async def test_each_problem_is_logged_once(
    plan_scene: Any, caplog: pytest.LogCaptureFixture
) -> None:
    scene = await scene_with_approver_name(plan_scene)
    caplog.set_level(logging.INFO, logger="plancord")
    scene.guild.create_role("Maintainers")
    scene.guild.create_role("Maintainers")
    await scene.env.settle()
    helpers = scene.guild.create_role("Helpers")  # more events, the same problem
    await scene.env.settle()
    scene.env.backend.edit_role(scene.guild.id, helpers.id, {"name": "Helpers 2"})
    await scene.env.settle()

    lines = [r.getMessage() for r in caplog.records if "'Maintainers' matches" in r.getMessage()]
    assert len([line for line in lines if "matches 2 roles" in line]) == 1
