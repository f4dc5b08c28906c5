"""Forged and stale button clicks on the plan and permission buttons change nothing.

A button's custom_id comes back from the Discord client, and a modified client can send any
string: another action, another agent's plan, a superseded or future revision, a revision of
0, -1, 10**20 or ``abc``, a truncated or over-long id, an ask that does not exist. Whatever
arrives, the bot must refuse it with an ephemeral reply or ignore it, never let an exception
escape, and leave the planning state, the audit log, the plan revisions, the pending asks and
the channel messages exactly as they were.

discord.py dispatches a click to a ``DynamicItem`` only when the clicked message carries a
component with that exact custom_id (``ViewStore.schedule_dynamic_item_call``), and SimCord
lets a member click only components that exist. So each forged id of up to Discord's 100
characters is put on a button of a message the bot posts in the chosen channel (what a stale
or modified client would show) and clicked there through SimCord: the real gateway payload,
then discord.py's template match, ``from_custom_id``, ``interaction_check`` and ``callback``.
Longer or empty ids cannot be on any message; they are sent with SimCord's own click dispatch
(``simcord.actors._component_interaction``, what ``click`` calls once it has found the
component) against the channel's newest real message, and discord.py must drop them. The
world (ada's plan at v2 with v1 superseded, a plan of cat's, a permission request of bea's
waiting for a decision) is built once; it is compared before and after every click, from the
database tables to the real messages' buttons.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import pytest
import simcord
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from simcord.actors import _component_interaction

from plancord.config import Config
from plancord.core.planning import Actor, Phase
from plancord.testing.sim import MODEL, SimClock, make_bot
from tests.fakes.anthropic_server import FakeAnthropicServer, ToolCall, tool_turn

PLAN = {
    "summary": "Add a greeting module",
    "steps": [{"description": "Create greet.py", "tools": ["create_file"], "risk": "low"}],
}
PLAN_V2 = {**PLAN, "summary": "Add a greeting module with a name"}
PLAN_ACTIONS = ("approve", "approve-fresh", "approve-confirm", "edit", "reject")
WATCHED_TABLES = ("planning_state", "plan_revisions", "audit_log", "pending_asks", "plan_messages")
EXAMPLES = 100
CUSTOM_ID_LIMIT = 100
CONFIRMATIONS = ("Approved plan", "Sent plan", "Rejected plan", "Allowed", "Denied")


@dataclass
class World:
    runner: asyncio.Runner
    env: Any
    server: FakeAnthropicServer
    db_path: Path
    members: dict[str, Any]
    messages: dict[str, discord.Message]
    channels: dict[str, Any]
    ada_plan: str
    cat_plan: str
    ask_id: str
    outcomes: Counter[str] = field(default_factory=Counter)
    logged: list[logging.LogRecord] = field(default_factory=list)

    @property
    def app(self) -> Any:
        return self.env.bot.app


def plan_message(channel: Any, revision: int) -> discord.Message:
    for message in reversed(list(channel.history())):
        footer = (message.embeds[-1].footer.text or "") if message.embeds else ""
        if footer.startswith(f"v{revision} "):
            return message
    raise AssertionError(f"no plan message for v{revision}")


async def build(root: Path, runner: asyncio.Runner) -> World:
    server = await FakeAnthropicServer(
        [
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2})),
            tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
            tool_turn(ToolCall("bash_execute", {"command": "touch made.txt"})),
        ]
    ).start()
    config = Config.model_validate({"data_dir": str(root / "data"), "anthropic": {"model": MODEL}})
    clock = SimClock()
    env = simcord.Env(make_bot(config, server, clock))
    clock.env = env
    await env.start()
    guild = env.create_guild("plancord")
    admins = guild.create_role("Admins", permissions=discord.Permissions(administrator=True))
    members = {
        "ana": guild.add_member(env.create_user("ana")),
        "bob": guild.add_member(env.create_user("bob")),
        "boss": guild.add_member(env.create_user("boss"), roles=[admins]),
    }
    ana = members["ana"]
    app = env.bot.app
    channels = {}
    for name, profile in (("ada", "open"), ("cat", "open"), ("bea", "standard")):
        channels[name] = guild.create_text_channel(name)
        await app.manager.create(
            name,
            actor=Actor.user(ana.id, "ana"),
            channel_id=channels[name].id,
            guild_id=guild.id,
            profile=profile,
        )
    await ana.slash(channels["ada"], "plan start", task="add a greeting module")
    await ana.slash(channels["ada"], "plan edit", feedback="greet by name")
    await ana.slash(channels["cat"], "plan start", task="add a greeting module")
    await ana.send(channels["bea"], "make a file")
    ada = await app.planning.current_revision("ada")
    cat = await app.planning.current_revision("cat")
    assert ada is not None and ada.revision == 2
    assert cat is not None and cat.revision == 1
    [ask_id] = list(env.bot.notifier.asks.live.ids())
    env.raise_errors()
    return World(
        runner,
        env,
        server,
        root / "data" / "plancord.db",
        members,
        {
            "ada v1": plan_message(channels["ada"], 1),
            "ada v2": plan_message(channels["ada"], 2),
            "cat v1": plan_message(channels["cat"], 1),
            "bea ask": channels["bea"].last_message,
        },
        channels,
        ada.plan_id,
        cat.plan_id,
        ask_id,
    )


class Collect(logging.Handler):
    """Errors discord.py or plancord log instead of raising (``from_custom_id`` failures,
    for one, are logged and dropped by discord.py)."""

    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with asyncio.Runner() as runner:
        built = runner.run(build(tmp_path_factory.mktemp("fuzz-clicks"), runner))
        handler = Collect(built.logged)
        logging.getLogger().addHandler(handler)
        try:
            yield built
        finally:
            logging.getLogger().removeHandler(handler)

            async def close() -> None:
                await built.env.settle()
                await built.env.bot.close()
                await built.env.shutdown()
                await built.server.stop()

            runner.run(close())
        built.env.raise_errors()


# -- what must not change ------------------------------------------------------------------


def database(world: World) -> dict[str, list[tuple[Any, ...]]]:
    with closing(sqlite3.connect(world.db_path)) as conn:
        rows = {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            for table in WATCHED_TABLES
        }
        # A refused decision is audited (who tried what); it is the one row a click that
        # changes nothing may add.
        refused = {"decision-refused", "ask-refused", "result-refused"}
        rows["audit_log"] = [r for r in rows["audit_log"] if not refused & set(map(str, r))]
        return rows


def observed(world: World) -> tuple[Any, ...]:
    """Everything a click must leave as it was."""
    channel_calls = [
        (r.method, r.path) for r in world.env.http_requests if r.path.startswith("/channels/")
    ]
    return (
        database(world),
        channel_calls,
        len(world.server.requests),
        sorted(world.env.bot.notifier.asks.live.ids()),
        {
            name: world.env.backend.get_message(m.channel.id, m.id).components
            for name, m in world.messages.items()
        },
    )


# -- forged custom_ids ---------------------------------------------------------------------

HEX = "0123456789abcdef"
REVISIONS = st.one_of(
    st.sampled_from(["0", "-1", "1", "2", "3", "02", "1.0", " 2", "abc", "", "999999"]),
    st.sampled_from(["1000000", str(10**20), str(-(10**20)), "1e3", "٢"]),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)


def plan_ids(world: World) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from([world.ada_plan, world.cat_plan, world.ada_plan.upper(), "", "0"]),
        st.text(HEX, min_size=1, max_size=32),
        st.text(HEX, min_size=33, max_size=120),
        st.just(world.ada_plan[:-1]),
        st.just(world.ada_plan + "0"),
        st.text(max_size=40),
    )


def ask_ids(world: World) -> st.SearchStrategy[str]:
    return st.one_of(
        st.just(world.ask_id),
        st.text(HEX, min_size=16, max_size=16),
        st.text(HEX, min_size=0, max_size=15),
        st.text(HEX, min_size=17, max_size=200),
        st.just(world.ask_id.upper()),
        st.text(max_size=30),
    )


def custom_ids(world: World) -> st.SearchStrategy[str]:
    """Ids the templates accept (a real action, hex plan id, revision 1 to 999999) but that
    name the wrong plan, revision or ask, and ids they reject."""
    well_formed_plans = st.builds(
        lambda action, plan_id, revision: f"plan:{action}:{plan_id}:{revision}",
        st.sampled_from(PLAN_ACTIONS),
        st.one_of(
            st.sampled_from([world.ada_plan, world.cat_plan]),
            st.text(HEX, min_size=1, max_size=32),
        ),
        st.one_of(st.integers(1, 3), st.integers(1, 999999)),
    )
    plans = st.builds(
        lambda action, plan_id, revision: f"plan:{action}:{plan_id}:{revision}",
        st.one_of(st.sampled_from(PLAN_ACTIONS), st.text(max_size=12)),
        plan_ids(world),
        REVISIONS,
    )
    well_formed_asks = st.builds(
        lambda choice, ask_id: f"ask:{choice}:{ask_id}",
        st.sampled_from(["allow", "deny"]),
        st.one_of(st.just(world.ask_id), st.text(HEX, min_size=16, max_size=16)),
    )
    asks = st.builds(
        lambda choice, ask_id: f"ask:{choice}:{ask_id}",
        st.one_of(st.sampled_from(["allow", "deny"]), st.text(max_size=8)),
        ask_ids(world),
    )
    padded = st.builds(
        lambda base, tail: base + tail,
        st.one_of(well_formed_plans, well_formed_asks),
        st.text(min_size=60, max_size=400),
    )
    return st.one_of(
        well_formed_plans,
        well_formed_plans,
        well_formed_asks,
        plans,
        asks,
        padded,
        st.text(max_size=120),
    )


@dataclass(frozen=True)
class Click:
    member: str
    channel: str
    custom_id: str


def clicks(world: World) -> st.SearchStrategy[Click]:
    return st.builds(
        Click,
        st.sampled_from(sorted(world.members)),
        st.sampled_from(sorted(world.channels)),
        custom_ids(world),
    )


def would_decide(world: World, click: Click) -> bool:
    """A click that names the live plan or ask exactly, by someone allowed to decide, is not
    forged: it is the real button (or the right one from the right message)."""
    approver = click.member in ("ana", "boss")
    for action in PLAN_ACTIONS:
        for plan_id, revision, channel in ((world.ada_plan, 2, "ada"), (world.cat_plan, 1, "cat")):
            live = f"plan:{action}:{plan_id}:{revision}"
            if click.custom_id == live and click.channel == channel and approver:
                return True
    return approver and click.custom_id in (f"ask:allow:{world.ask_id}", f"ask:deny:{world.ask_id}")


async def carrier(world: World, click: Click) -> discord.Message:
    """A message of the bot in the click's channel with one button bearing the forged id, as
    a stale or modified client would show it."""
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label="forged", custom_id=click.custom_id))
    channel = world.env.bot.get_partial_messageable(world.channels[click.channel].id)
    message = await channel.send("carrier", view=view)
    view.stop()
    return message


def deliver(world: World, click: Click) -> Any:
    """Click the forged id: on a carrier message when Discord could show such a button,
    else (empty, or over Discord's 100 characters) as a raw click payload on the channel's
    newest real message of the bot, which discord.py must ignore."""
    member = world.members[click.member]
    if 1 <= len(click.custom_id) <= CUSTOM_ID_LIMIT:
        message = world.runner.run(carrier(world, click))
        before = observed(world)
        result = world.runner.run(member.click(message, custom_id=click.custom_id))
        return before, result
    message = world.channels[click.channel].last_message
    stored = world.env.backend.get_message(message.channel.id, message.id)
    data = {"custom_id": click.custom_id, "component_type": discord.ComponentType.button.value}
    before = observed(world)
    return before, world.runner.run(_component_interaction(member, stored, data))


def private_answers(click: Click, result: Any) -> list[str]:
    """What ``click`` was told, all of it ephemeral: its response and followups; or, when it
    was answered with a deferred update of the card it came from (which shows nothing new),
    its followups."""
    followups = [f.content for f in result.followups]
    if result.ephemeral:
        return [result.response.content if result.response else "", *followups]
    assert result.deferred and not result.response.ephemeral, f"{click} was answered: {result!r}"
    assert all(f.ephemeral for f in result.followups), f"{click} was answered in public"
    return followups


def check_click(world: World, click: Click) -> None:
    assume(not would_decide(world, click))
    before, result = deliver(world, click)
    world.env.raise_errors()
    assert not world.logged, [r.getMessage() for r in world.logged]
    if result.modal is not None:
        title = result.modal["title"]
        values = {"feedback": "forged"} if title.startswith("Edit") else {"reason": "forged"}
        submitted = world.runner.run(world.members[click.member].submit_modal(result, values))
        world.env.raise_errors()
        assert submitted.ephemeral, f"a modal opened by {click} was acted on"
        world.outcomes["modal, then refused"] += 1
    elif result.acknowledged:
        texts = private_answers(click, result)
        assert any(texts), f"{click} was acknowledged without a word"
        assert not any(t.startswith(CONFIRMATIONS) for t in texts), f"{click} was obeyed"
        world.outcomes["refused"] += 1
    else:
        world.outcomes["ignored"] += 1
    assert observed(world) == before, f"{click} changed something"


FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def test_forged_and_stale_clicks_are_refused_or_ignored(world: World) -> None:
    @FUZZ_SETTINGS
    @given(click=clicks(world))
    def check(click: Click) -> None:
        check_click(world, click)

    stale = [
        Click(member, "ada", f"plan:{action}:{world.ada_plan}:1")
        for member in ("ana", "boss")
        for action in PLAN_ACTIONS
    ]
    elsewhere = [
        Click("ana", "cat", f"plan:approve:{world.ada_plan}:2"),
        Click("ana", "ada", f"plan:approve:{world.cat_plan}:1"),
        Click("bob", "ada", f"plan:approve:{world.ada_plan}:2"),
        Click("bob", "bea", f"ask:allow:{world.ask_id}"),
        Click("ana", "ada", f"plan:approve:{world.ada_plan}:3"),
        Click("ana", "ada", f"plan:approve:{world.ada_plan}:0"),
        Click("ana", "ada", f"plan:approve:{world.ada_plan}:-1"),
        Click("ana", "ada", f"plan:approve:{world.ada_plan}:{10**20}"),
        Click("ana", "ada", f"plan:approve:{world.ada_plan}:abc"),
        Click("ana", "ada", f"plan:approve:{world.ada_plan}:999999"),
        Click("ana", "bea", f"ask:allow:{'0' * 16}"),
        Click("ana", "ada", f"plan:approve:{world.ada_plan}:2" + "9" * 90),
    ]
    for click in stale + elsewhere:
        check = example(click=click)(check)
    check()

    assert world.outcomes["refused"] >= EXAMPLES // 4, world.outcomes
    assert world.outcomes["ignored"] >= EXAMPLES // 4, world.outcomes


def test_the_world_is_what_the_fuzz_assumes(world: World) -> None:
    """ada waits on v2 with v1 superseded, cat on its v1, bea on a permission request: the
    forged clicks above had something real to hit."""

    async def states() -> list[Phase]:
        return [(await world.app.store.load_state(a)).phase for a in ("ada", "cat", "bea")]

    assert world.runner.run(states())[:2] == [Phase.SUBMITTED, Phase.SUBMITTED]
    assert world.env.bot.notifier.asks.waiting("bea")
    assert world.ada_plan != world.cat_plan


def test_edit_on_a_superseded_revision_is_refused_when_its_form_is_submitted(
    world: World,
) -> None:
    """The form opens before anything is read (it must be the click's first answer);
    its submission is refused, and changes nothing."""
    click = Click("ana", "ada", f"plan:edit:{world.ada_plan}:1")

    before, result = deliver(world, click)
    assert result.modal is not None
    submitted = world.runner.run(world.members["ana"].submit_modal(result, {"feedback": "late"}))

    world.env.raise_errors()
    assert submitted.ephemeral
    assert "superseded" in submitted.response.content
    assert observed(world) == before


def test_the_real_button_through_the_same_path_does_decide(world: World) -> None:
    """The delivery path and the comparison above can tell a click that acts: the live
    Approve of cat's plan, by its requester, in cat's channel, approves it. (Runs last: it
    changes the world.)"""
    click = Click("ana", "cat", f"plan:approve:{world.cat_plan}:1")
    assert would_decide(world, click)

    before, result = deliver(world, click)

    world.env.raise_errors()
    texts = [result.response.content if result.response else ""]
    texts += [f.content for f in result.followups]
    assert any(t.startswith("Approved plan v1") for t in texts), texts
    assert observed(world) != before
