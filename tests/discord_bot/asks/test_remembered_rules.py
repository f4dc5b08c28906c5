""" "Allow always" and "Deny always" on a permission card, end to end: the scope is the argv
the filter's reader parsed (never a text prefix), the rule is kept with who made it, applies
outside plan mode only, in the order the docs give, expires, and is revoked for the next
call; a click by anyone the approver policy does not accept remembers nothing."""

from __future__ import annotations

from simcord.actors import _component_interaction

from plancord.config.call_rules import OperatorCallRule
from tests.discord_bot.agent_scene import SceneFactory
from tests.discord_bot.asks.remembering import (
    approver_scene,
    cards,
    fields_of,
    remember,
    result_texts,
    shell_script,
)


async def test_allow_always_for_npm_test_covers_its_argv_and_nothing_that_only_starts_alike(
    scene_factory: SceneFactory,
) -> None:
    script = shell_script("npm test", "npm test", "npm test; rm x", "npm testx", "npm run evil")
    scene, channel, carol = await approver_scene(scene_factory, script)
    await scene.ana.send(channel, "run the tests")
    [first] = cards(scene, channel)
    assert "no remembered rule covers this call" in fields_of(scene, first)["Rule that applies"]

    offer = await remember(carol, first)

    assert "`bash_execute` running `npm test`" in offer.response.content
    assert "for agent **ada**" in offer.response.content
    [rule] = await scene.rows("SELECT * FROM call_rules")
    assert (rule["agent"], rule["tool"], rule["decision"]) == ("ada", "bash_execute", "allow")
    assert f"user:{carol.id}(carol)" == rule["created_by"] and rule["created_at"]
    assert "Allowed always by" in fields_of(scene, first)["Decision"]
    # The second `npm test` ran unasked; the third call is asked.
    asked = cards(scene, channel)
    assert len(asked) == 2
    assert "npm test; rm x" in (asked[-1].embeds[0].description or "")
    await carol.click(asked[-1], label="Deny")
    assert "npm testx" in (cards(scene, channel)[-1].embeds[0].description or "")
    await carol.click(cards(scene, channel)[-1], label="Deny")
    assert "npm run evil" in (cards(scene, channel)[-1].embeds[0].description or "")
    await carol.click(cards(scene, channel)[-1], label="Deny")

    assert len(cards(scene, channel)) == 4
    texts = result_texts(scene)
    assert not texts[1].startswith("Not run")
    assert all("denied permission" in t for t in texts[2:5])
    assert scene.bot_texts(channel)[-1] == "Done."


async def test_the_requester_alone_and_a_stranger_cannot_remember_a_rule(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, _carol = await approver_scene(scene_factory, shell_script("npm test"))
    await scene.ana.send(channel, "run the tests")
    [card] = cards(scene, channel)

    by_requester = await scene.ana.click(card, label="Allow always…")
    by_stranger = await scene.bob.click(card, label="Deny always…")

    for refused in (by_requester, by_stranger):
        assert refused.response is not None and refused.response.ephemeral
        assert "Only members with an approver role" in refused.response.content
    assert await scene.rows("SELECT * FROM call_rules") == []
    refused = [a for a in await scene.app.store.list_audit("ada") if a.action == "ask-refused"]
    assert [a.detail["remember"]["argv"] for a in refused] == [["npm", "test"]] * 2
    await scene.ana.click(card, label="Allow")  # the requester may still allow this one call
    assert "Allowed by" in fields_of(scene, card)["Decision"]


async def test_deny_always_refuses_the_next_call_unasked_and_beats_a_members_allow(
    scene_factory: SceneFactory,
) -> None:
    script = shell_script("npm test", "npm test --watch", "npm test")
    scene, channel, _carol = await approver_scene(scene_factory, script)
    rules = scene.app.call_rules
    assert rules is not None
    from plancord.core.call_rules import RuleScope
    from plancord.core.kinds import Permission

    await rules.remember("ada", RuleScope("bash_execute", argv=("npm",)), Permission.ALLOW, "x")
    await rules.remember(
        "ada", RuleScope("bash_execute", argv=("npm", "test")), Permission.DENY, "y"
    )

    await scene.ana.send(channel, "run the tests")

    assert cards(scene, channel) == []
    texts = result_texts(scene)
    assert all(t.startswith("Refused: member rule r") and "(deny) denies" in t for t in texts[:3])


async def test_an_operator_rule_ranks_over_a_members_rule(
    scene_factory: SceneFactory,
) -> None:
    scene, channel, _carol = await approver_scene(scene_factory, shell_script("npm test"))
    rules = scene.app.call_rules
    assert rules is not None
    operator = OperatorCallRule(decision="ask", tool="bash_execute", command="npm")  # type: ignore[arg-type]
    rules.operator_rules = (operator.rule(1),)
    from plancord.core.call_rules import RuleScope
    from plancord.core.kinds import Permission

    await rules.remember(
        "ada", RuleScope("bash_execute", argv=("npm", "test")), Permission.ALLOW, "x"
    )
    await scene.ana.send(channel, "run the tests")

    [card] = cards(scene, channel)
    assert fields_of(scene, card)["Rule that applies"].startswith("operator rule op1 (ask)")
    labels = [c["label"] for row in scene.stored(card).components for c in row["components"]]
    assert labels == ["Allow", "Deny"]  # an operator's ask cannot be remembered away


async def test_a_forged_confirmation_on_the_card_remembers_nothing(
    scene_factory: SceneFactory,
) -> None:
    """A client that sends the confirmation's id straight on the public card, skipping the
    approver's private offer (and its check of who clicked), decides nothing: the card holds
    no such button, so the bot acts on no such click; no rule is kept, and the call still
    waits for an approver's answer."""
    scene, channel, carol = await approver_scene(scene_factory, shell_script("npm test"))
    await scene.ana.send(channel, "run the tests")
    [card] = cards(scene, channel)
    stored = scene.stored(card)
    offer = next(
        c["custom_id"]
        for row in stored.components
        for c in row["components"]
        if c.get("label") == "Allow always…"
    )
    forged = {"custom_id": f"ask:remember:allow:always:{offer.rsplit(':', 1)[1]}"}

    for member in (scene.bob, scene.ana):
        result = await _component_interaction(member, stored, {**forged, "component_type": 2})
        assert not result.acknowledged and result.response is None

    assert await scene.rows("SELECT * FROM call_rules") == []
    await carol.click(card, label="Deny")
    assert "Denied by" in fields_of(scene, card)["Decision"]
