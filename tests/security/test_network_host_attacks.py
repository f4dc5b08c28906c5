"""The host a request names, attacked from the agent's side after approval: each attack a
scripted model's command in the real sandbox, through the real bridge and proxy, under the
real bot in SimCord, judged from outside (what the test process tried to connect to, what
the local servers saw, what the completion card lists).

No packet leaves loopback: the test process's resolver answers a few names as a DNS
server would (``Zone``: up to a NUL, as the C library reads a name), and every connect it
makes to an address off loopback is refused and kept (``Outbound``), so "the proxy never
tried" is observed, not assumed.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plancord.sandbox.layers import bubblewrap_problem
from plancord.testing.anthropic_server import ToolCall, tool_turn
from tests.security.network_scene import (
    FILE_BODY,
    Outbound,
    TcpListener,
    Zone,
    allowed,
    approved,
    bash,
    curl,
    host_echo_server,
    interface_address,
    local_server,
    plan_of,
    ran,
    raw_request,
    result_steps,
    serve_files,
    start_network_scene,
)
from tests.world import PlanScene, Worlds

pytestmark = pytest.mark.skipif(
    bubblewrap_problem() is not None, reason="the plan-bound network needs bubblewrap"
)

COMPLETE = tool_turn(ToolCall("complete_plan", {"summary": "fetched"}))


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    with local_server(serve_files(tmp_path / "served")) as number:
        yield number


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch) -> Zone:
    made = Zone(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", made.getaddrinfo)
    return made


@pytest.fixture(autouse=True)
def outbound(monkeypatch: pytest.MonkeyPatch) -> Outbound:
    guard = Outbound(socket.socket.connect, socket.socket.connect_ex)
    guard.install(monkeypatch)
    return guard


@pytest.fixture
def scene_with(worlds: Worlds, port: int) -> Callable[..., Any]:
    """``await scene_with(hosts, script, allow=...)``: one step granting ``hosts``, approved."""

    async def make(hosts: list[str], script: list[Any], *, allow: list[str] = ()) -> PlanScene:
        scene = await start_network_scene(
            worlds,
            plan_of((["bash_execute", "complete_plan"], hosts)),
            script,
            allow=allowed(port, *allow),
        )
        await approved(scene)
        await scene.app.runtime.wait_idle("ada")
        return scene

    return make


def _step_one(scene: PlanScene) -> str:
    return next(value for name, value in result_steps(scene).items() if "1" in name)


@pytest.mark.parametrize(
    "head",
    [
        b"CONNECT elsewhere.test\0.files.test:443 HTTP/1.1\r\n\r\n",
        b"GET http://elsewhere.test\0.files.test/ HTTP/1.1\r\nHost: files.test\r\n\r\n",
    ],
    ids=["connect", "absolute-get"],
)
async def test_a_nul_in_a_name_matches_no_grant_and_reaches_nothing(
    scene_with: Callable[..., Any], zone: Zone, outbound: Outbound, head: bytes
) -> None:
    zone.names["elsewhere.test"] = "198.51.100.7"
    scene = await scene_with(
        ["*.files.test"], [bash(raw_request(head)), COMPLETE], allow=["*.files.test"]
    )
    [result, _] = ran(scene)
    assert "answer: HTTP/1.1 400 a bare CR, LF or NUL" in result, result
    assert outbound.attempts == []
    assert not any("elsewhere" in name for name in zone.asked), zone.asked
    assert "🌐" not in _step_one(scene), _step_one(scene)


async def test_plain_http_goes_with_the_granted_host_and_another_host_header_is_refused(
    scene_with: Callable[..., Any],
) -> None:
    with host_echo_server() as (echo, seen):
        scene = await scene_with(
            [f"files.test:{echo}"],
            [
                bash(f"curl -sS -H 'Host: secret.internal' http://files.test:{echo}/"),
                bash(f"curl -sS -H 'Host: FILES.test.:{echo}' http://files.test:{echo}/"),
                COMPLETE,
            ],
            allow=[f"files.test:{echo}"],
        )
    other, same, _ = ran(scene)
    assert f"the Host header names secret.internal, the URL files.test:{echo}" in other, other
    assert f"host=files.test:{echo}" in same, same
    assert seen == [f"files.test:{echo}"]


async def test_a_granted_name_resolving_to_this_host_is_refused_and_not_listed_as_reached(
    scene_with: Callable[..., Any], zone: Zone, outbound: Outbound, port: int
) -> None:
    address = interface_address()
    if address is None:
        pytest.skip("this host has no interface address but loopback")
    zone.names["mirror.test"] = address
    scene = await scene_with(
        ["mirror.test", f"files.test:{port}"],
        [bash(curl("mirror.test", 80)), bash(curl("files.test", port)), COMPLETE],
        allow=["mirror.test"],
    )
    mirror, granted, _ = ran(scene)
    assert f"mirror.test resolves to {address}, an address of this host" in mirror, mirror
    assert FILE_BODY.strip() in granted, granted
    assert outbound.attempts == []
    step = _step_one(scene)
    assert f"🌐 files.test:{port} ×1" in step, step
    assert "🌐 mirror.test" not in step, step
    assert f"mirror.test resolves to {address}" in step, step
    assert "— refused" in step, step


@pytest.mark.parametrize("address", ["fd00:ec2::254", "100.100.100.200", "169.254.169.254"])
async def test_a_metadata_address_is_refused_whatever_the_name(
    scene_with: Callable[..., Any], zone: Zone, outbound: Outbound, address: str
) -> None:
    zone.names["metadata.test"] = address
    scene = await scene_with(
        ["metadata.test"],
        [bash("curl -sS --max-time 5 http://metadata.test/latest/meta-data/"), COMPLETE],
        allow=["metadata.test"],
    )
    [result, _] = ran(scene)
    assert f"metadata.test resolves to {address}" in result, result
    assert outbound.attempts == []
    assert "🌐" not in _step_one(scene)


async def test_a_port_the_step_does_not_name_gets_no_tunnel(worlds: Worlds, port: int) -> None:
    listener = TcpListener()
    try:
        scene = await start_network_scene(
            worlds,
            plan_of((["bash_execute"], ["files.test"])),
            [bash(f"curl -sS --max-time 5 -p http://files.test:{listener.port}/")],
            allow=allowed(listener.port),
        )
        await approved(scene)
        [result] = ran(scene)
        assert not listener.reached()
    finally:
        listener.close()
    assert f"step 1 wants files.test:{listener.port} — not in the plan" in result, result


@pytest.mark.parametrize(
    "head",
    [
        b"GET http://files.test:99999/ HTTP/1.1\r\nHost: files.test:99999\r\n\r\n",
        "CONNECT \u0301a.files.test:443 HTTP/1.1\r\n\r\n".encode(),
        b"CONNECT " + b"a" * 64 + b".files.test:443 HTTP/1.1\r\n\r\n",
    ],
    ids=["port-99999", "idna-combining-mark", "label-too-long"],
)
async def test_a_malformed_head_is_answered_400_and_logged_once(
    scene_with: Callable[..., Any], caplog: pytest.LogCaptureFixture, head: bytes
) -> None:
    caplog.set_level(logging.INFO, logger="plancord.sandbox.proxy")
    scene = await scene_with(
        ["*.files.test"], [bash(raw_request(head)), COMPLETE], allow=["*.files.test"]
    )
    [result, _] = ran(scene)
    assert "answer: HTTP/1.1 400 " in result, result
    mine = [r for r in caplog.records if r.name == "plancord.sandbox.proxy"]
    assert [r.levelno for r in mine] == [logging.INFO], [r.getMessage() for r in mine]
    assert "a bad request head, answered 400" in mine[0].getMessage()
    assert "🌐" not in _step_one(scene)
