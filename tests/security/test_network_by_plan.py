"""Network by the plan, end to end: the real bot under SimCord, a scripted model, commands in
the real sandbox, and local servers on 127.0.0.1 named as hosts through the proxy's own
resolver map (``network_scene``).

A step names the hosts it needs; the approval grants exactly those while the step is
current; anything else is drift (asked, refused or logged); a program that ignores the
proxy, a raw socket and DNS reach nothing; a plan naming a host outside the operator's
bound is refused at submit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plancord.core.planning import Phase
from plancord.demo import host_plan_mode
from plancord.sandbox import landlock_abi
from plancord.sandbox.layers import bubblewrap_problem
from plancord.testing.anthropic_server import Script, ToolCall, text_turn, tool_turn
from tests.security.network_scene import (
    FILE_BODY,
    WHEEL,
    TcpListener,
    UdpListener,
    allowed,
    approved,
    bash,
    local_server,
    plan_of,
    ran,
    result_steps,
    results,
    serve_files,
    start_network_scene,
)
from tests.security.network_scene import NAMES as ALLOW
from tests.security.network_scene import curl as _curl
from tests.world import PlanScene, Worlds, buttons, plan_scene_in

pytestmark = pytest.mark.skipif(
    bubblewrap_problem() is not None, reason="the plan-bound network needs bubblewrap"
)


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    with local_server(serve_files(tmp_path / "served")) as number:
        yield number


@pytest.fixture
def network_scene(worlds: Worlds, port: int) -> Callable[..., Any]:
    """``scene = await network_scene(plan, script, drift=..., network=...)``."""

    async def make(plan: dict[str, Any], script: Script, **options: Any) -> PlanScene:
        return await start_network_scene(worlds, plan, script, allow=allowed(port), **options)

    return make


async def test_a_granted_host_is_reached_by_curl_and_pip(
    network_scene: Callable[..., Any], port: int
) -> None:
    pip = (
        "python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check "
        f"--index-url http://pypi.test:{port}/simple/ --trusted-host pypi.test "
        "-d /tmp/dl tinypkg && ls /tmp/dl"
    )
    scene = await network_scene(
        plan_of((["bash_execute"], [f"files.test:{port}", f"pypi.test:{port}"])),
        [bash(_curl("files.test", port)), bash(_curl("files.test", port, "-p")), bash(pip)],
    )
    await approved(scene)
    curl, tunnel, downloaded = ran(scene)
    assert FILE_BODY.strip() in curl, curl
    assert FILE_BODY.strip() in tunnel, tunnel  # through CONNECT, as HTTPS goes
    assert WHEEL in downloaded, downloaded
    assert "[exit code 0]" in downloaded


@pytest.mark.parametrize(
    ("network", "shown"),
    [
        ({"allow": ALLOW}, "Network: `files.test`"),
        (True, "Network: anything (the agent has `network: true`)"),
    ],
    ids=["plan-bound", "network-true"],
)
async def test_the_plan_message_shows_each_steps_hosts(
    network_scene: Callable[..., Any], network: Any, shown: str
) -> None:
    scene = await network_scene(
        plan_of((["bash_execute"], ["files.test"]), ([], [])), [], network=network
    )
    fields = [f.value for e in scene.plan_message(1).embeds for f in e.fields]
    assert shown in fields[0], fields
    assert "`files.test`" in fields[0], fields
    assert ("Network:" in fields[1]) is (network is True), fields


async def test_under_log_an_ungranted_host_is_reached_and_flagged(
    network_scene: Callable[..., Any], port: int
) -> None:
    scene = await network_scene(
        plan_of((["bash_execute"], [f"files.test:{port}"])),
        [bash(_curl("other.test", port))],
        drift="log",
    )
    await approved(scene)
    [result] = ran(scene)
    assert FILE_BODY.strip() in result, result
    drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
    assert [(d.detail["decision"], d.detail["why"]) for d in drifts] == [
        ("logged", f"step 1 wants other.test:{port} — not in the plan")
    ]
    assert [(d.detail["finding"], d.detail["outcome"]) for d in drifts] == [("host", "log")]


async def test_under_log_a_host_outside_the_operators_bound_is_still_refused(
    network_scene: Callable[..., Any], port: int
) -> None:
    # The bound is the operator's: no drift setting lets a connection past it, and the
    # refusal is one drift row like any other, counted on the progress card.
    scene = await network_scene(
        plan_of((["bash_execute", "update_plan_step"], [f"files.test:{port}"])),
        [
            bash(_curl("outside.test", port, "-p")),
            tool_turn(ToolCall("update_plan_step", {"step": 1, "status": "in_progress"})),
        ],
        drift="log",
    )
    await approved(scene)
    result = ran(scene)[0]
    why = f"outside.test:{port} is not among the hosts the operator allows this agent"
    assert f"- {why} (refused)" in result, result
    drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
    assert [
        (d.detail["finding"], d.detail["outcome"], d.detail["decision"], d.detail["why"])
        for d in drifts
    ] == [("bound", "refuse", "refused", why)]
    footers = [e.footer.text or "" for m in scene.channel.history() for e in m.embeds]
    assert any("1 call outside the plan" in f for f in footers), footers


async def test_under_the_landlock_fallback_a_plan_naming_hosts_is_refused(
    worlds: Worlds,
) -> None:
    if landlock_abi() == 0:
        pytest.skip("the Landlock fallback needs Landlock")
    plan = plan_of((["bash_execute"], ["files.test"]))
    world = await worlds.start(
        [tool_turn(ToolCall("submit_plan", {"plan": plan})), text_turn("I will plan offline")],
        plan_mode=host_plan_mode(),
        config={
            "agents": {"ada": {"network": {"allow": ALLOW}}},
            "sandbox": {"layer": "landlock"},
        },
    )
    scene = await plan_scene_in(world)
    await scene.ana.slash(scene.channel, "plan start", task="fetch")
    [result] = results(scene)
    assert "steps[0].network: this host runs agent commands without bubblewrap" in result
    assert (await scene.state()).phase is Phase.GATHERING


@pytest.mark.parametrize("tunnel", [False, True], ids=["http", "connect"])
async def test_an_ungranted_host_is_refused_and_the_model_told(
    network_scene: Callable[..., Any], port: int, tunnel: bool
) -> None:
    options = ("-p",) if tunnel else ()
    scene = await network_scene(
        plan_of((["bash_execute"], [f"files.test:{port}"])),
        [bash(_curl("other.test", port, *options))],
    )
    await approved(scene)
    [result] = ran(scene)
    assert FILE_BODY.strip() not in result
    # Through CONNECT (as HTTPS goes) curl shows only the 403; the host's note says why.
    assert "[network: connections refused during this call]" in result, result
    assert f"- step 1 wants other.test:{port} — not in the plan (refused)" in result, result
    drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
    assert [d.detail["decision"] for d in drifts] == ["refused"]


async def test_an_ungranted_host_is_asked_denied_then_allowed_for_theplan_of(
    network_scene: Callable[..., Any], port: int
) -> None:
    # Each attempt gives up after a second while the card waits for a human; the answer
    # decides the held connections and, when it allows, the rest of the plan.
    quick = _curl("other.test", port, "--max-time", "1")
    scene = await network_scene(
        plan_of((["bash_execute"], ["files.test"])),
        [
            bash(quick),
            text_turn("waiting for a human"),
            bash(quick),
            text_turn("waiting for a human"),
            bash(_curl("other.test", port)),
        ],
        drift="ask",
    )
    await approved(scene)
    card = _card(scene)
    assert f"step 1 wants other.test:{port} — not in the plan" in _shown(card), _shown(card)
    await scene.ana.click(card, label="Deny")
    await scene.ana.send(scene.channel, "try again")
    second = _card(scene)
    assert second.id != card.id
    await scene.ana.click(second, label="Allow for this plan")
    await scene.ana.send(scene.channel, "try again")
    first, again, third = ran(scene)
    assert FILE_BODY.strip() not in first + again
    assert FILE_BODY.strip() in third, third
    drifts = [a for a in await scene.app.store.list_audit("ada") if a.action == "drift"]
    assert [d.detail["decision"] for d in drifts] == ["denied", "allowed"]


def _shown(message: Any) -> str:
    return str(message.content) + "".join(str(e.to_dict()) for e in message.embeds)


def _card(scene: PlanScene) -> Any:
    """The newest message with an Allow for this plan button."""
    for message in reversed(scene.bot_messages()):
        if buttons(message).get("Allow for this plan"):
            return message
    raise AssertionError("no network card was posted")


async def test_a_step_change_revokes_the_previous_steps_host_and_the_card_counts(
    network_scene: Callable[..., Any], port: int
) -> None:
    scene = await network_scene(
        plan_of(
            (["bash_execute"], [f"files.test:{port}"]),
            (["create_file", "bash_execute"], [f"pypi.test:{port}"]),
        ),
        [
            bash(_curl("files.test", port)),
            bash(_curl("files.test", port)),
            tool_turn(ToolCall("create_file", {"path": "notes.txt", "content": "n\n"})),
            bash(_curl("files.test", port)),
            bash(_curl("pypi.test", port)),
            tool_turn(ToolCall("complete_plan", {"summary": "fetched"})),
        ],
    )
    await approved(scene)
    await scene.app.runtime.wait_idle("ada")
    before, _, _, after, granted, _ = ran(scene)
    assert FILE_BODY.strip() in before, before
    assert FILE_BODY.strip() not in after
    assert f"step 2 wants files.test:{port} — not in the plan" in after, after
    assert FILE_BODY.strip() in granted, granted
    steps = result_steps(scene)
    first = next(value for name, value in steps.items() if "1" in name)
    second = next(value for name, value in steps.items() if "2" in name)
    assert f"🌐 files.test:{port} ×2" in first, steps
    assert f"🌐 pypi.test:{port} ×1" in second, steps
    assert "🌐 files.test" not in second, steps
    assert f"step 2 wants files.test:{port} — not in the plan — refused\n" in second + "\n", steps


@pytest.mark.parametrize(
    ("network", "reaches"),
    [({"allow": ALLOW}, False), (True, True)],
    ids=["plan-bound", "control-network-true"],
)
async def test_a_program_ignoring_the_proxy_reaches_nothing(
    network_scene: Callable[..., Any], port: int, network: Any, reaches: bool
) -> None:
    scene = await network_scene(
        plan_of((["bash_execute"], ["files.test"] if reaches is False else [])),
        [bash(_curl("127.0.0.1", port, "--noproxy", "*"))],
        network=network,
    )
    await approved(scene)
    [result] = ran(scene)
    assert (FILE_BODY.strip() in result) is reaches, result


@pytest.mark.parametrize(
    ("network", "reaches"),
    [({"allow": ALLOW}, False), (True, True)],
    ids=["plan-bound", "control-network-true"],
)
async def test_a_raw_socket_to_an_address_and_dns_reach_nothing(
    network_scene: Callable[..., Any], network: Any, reaches: bool
) -> None:
    tcp, udp = TcpListener(), UdpListener()
    raw = (
        "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', "
        f"{tcp.port}), 3); print('connected')\""
    )
    dns = (
        'python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); '
        f"s.sendto(b'query', ('127.0.0.1', {udp.port})); print('sent')\"; "
        "getent hosts example.org || echo no-name"
    )
    try:
        scene = await network_scene(
            plan_of((["bash_execute"], ["files.test"] if not reaches else [])),
            [bash(raw), bash(dns)],
            network=network,
        )
        await approved(scene)
        raw_result, dns_result = ran(scene)
        assert tcp.reached() is reaches, raw_result
        assert udp.reached() is reaches, dns_result
        if not reaches:
            assert "connected" not in raw_result
            assert "no-name" in dns_result
    finally:
        tcp.close()
        udp.close()


async def test_a_plan_naming_a_host_outside_the_bound_is_refused_at_submit(
    worlds: Worlds,
) -> None:
    plan = plan_of((["bash_execute"], ["files.test", "evil.example"]))
    world = await worlds.start(
        [tool_turn(ToolCall("submit_plan", {"plan": plan})), text_turn("I will ask first")],
        plan_mode=host_plan_mode(),
        config={"agents": {"ada": {"network": {"allow": ALLOW}}}},
    )
    scene = await plan_scene_in(world)
    await scene.ana.slash(scene.channel, "plan start", task="fetch")
    [result] = results(scene)
    assert "steps[0].network: evil.example is not among the hosts the operator allows" in result
    assert (await scene.state()).phase is Phase.GATHERING
    assert scene.plan_messages() == []
