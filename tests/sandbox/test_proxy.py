"""The host-side proxy on its own: what a request head names, and how a connection ends when
the request is bad, too large, refused, or its decision fails. The end-to-end behaviour
(through the bot and the sandbox) is in ``tests/security/test_network_by_plan.py``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from plancord.agent.mcp.spawn import server_spawn
from plancord.core.host_names import DnsName, Endpoint
from plancord.core.sandbox_policy import Proxied, SandboxPolicy
from plancord.sandbox import layers, proxy_door, run_sandboxed, runner, wall_helper
from plancord.sandbox.layers import bubblewrap_problem
from plancord.sandbox.proxy import MAX_HEAD_BYTES, NetworkProxy, ProxyVerdict
from plancord.sandbox.request_head import BadRequest, parse_head
from tests.security.network_scene import local_server


def test_connect_names_the_host_and_port() -> None:
    target = parse_head(b"CONNECT Files.Test.:443 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (target.endpoint, target.tunnel) == (Endpoint(DnsName("files.test"), 443), True)


def test_plain_http_goes_on_in_origin_form_without_proxy_headers() -> None:
    head = (
        b"GET http://files.test:8080/a/b?q=1 HTTP/1.1\r\nHost: files.test:8080\r\n"
        b"Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
        b"Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n"
    )
    target = parse_head(head)
    assert (target.endpoint, target.tunnel) == (Endpoint(DnsName("files.test"), 8080), False)
    assert target.head == (
        b"GET /a/b?q=1 HTTP/1.1\r\nHost: files.test:8080\r\nConnection: close\r\n\r\n"
    )


@pytest.mark.parametrize(
    "head",
    [
        b"GET /relative HTTP/1.1\r\n\r\n",
        b"GET ftp://files.test/ HTTP/1.1\r\n\r\n",
        b"CONNECT files.test HTTP/1.1\r\n\r\n",
        b"CONNECT files.test:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT :443 HTTP/1.1\r\n\r\n",
        b"HELLO\r\n\r\n",
        b"GET http://files.test/ HTTP/2\r\n\r\n",
    ],
)
def test_anything_else_is_a_bad_request(head: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_head(head)


@pytest.fixture
async def proxy_at(tmp_path: Path) -> AsyncIterator[Callable[..., Path]]:
    started: list[NetworkProxy] = []
    loop = asyncio.get_running_loop()

    def start(decide: Callable[..., object], names: dict[str, str] | None = None) -> Path:
        proxy = NetworkProxy(decide, loop, names or {})  # type: ignore[arg-type]
        started.append(proxy)
        path = tmp_path / "net" / "ada.sock"
        proxy.listen("ada", path)
        return path

    yield start
    for proxy in started:
        await asyncio.to_thread(proxy.close)


def _door(path: Path) -> tuple[socket.socket, int]:
    """What a sandbox's bridge does: a loopback listener handed to the proxy at ``path``;
    the door (open while the run lasts) and the listener's port."""
    door = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    door.connect(str(path))
    with socket.create_server(("127.0.0.1", 0)) as listener:
        proxy_door.hand_over(door, listener)
        return door, listener.getsockname()[1]


async def _exchange(path: Path, data: bytes) -> bytes:
    door, port = _door(path)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(data)
        await writer.drain()
        answer = await reader.read()
        writer.close()
    finally:
        door.close()
    return answer


async def _refuse(agent: str, endpoint: Endpoint) -> ProxyVerdict:
    return ProxyVerdict(False, f"{agent} may not reach {endpoint.host.shown}")


async def _fail(agent: str, endpoint: Endpoint) -> ProxyVerdict:
    raise RuntimeError("the store is gone")


async def test_a_refused_host_is_told_why_and_never_connected(
    proxy_at: Callable[..., Path],
) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    path = await asyncio.to_thread(proxy_at, _refuse)
    answer = await _exchange(path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403 ada may not reach 127.0.0.1\r\n")
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()


async def test_a_decision_that_fails_refuses(proxy_at: Callable[..., Path]) -> None:
    path = await asyncio.to_thread(proxy_at, _fail)
    answer = await _exchange(path, b"CONNECT files.test:443 HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403 the host could not decide; refused")


async def test_a_head_past_the_bound_is_refused_unread(proxy_at: Callable[..., Path]) -> None:
    path = await asyncio.to_thread(proxy_at, _refuse)
    answer = await _exchange(path, b"GET http://x/ HTTP/1.1\r\nX: " + b"a" * MAX_HEAD_BYTES)
    assert answer.startswith(b"HTTP/1.1 431 ")


async def test_a_bad_request_is_answered_400(proxy_at: Callable[..., Path]) -> None:
    path = await asyncio.to_thread(proxy_at, _refuse)
    answer = await _exchange(path, b"GET /local HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")


async def test_the_socket_is_private_to_the_bot(proxy_at: Callable[..., Path]) -> None:
    path = await asyncio.to_thread(proxy_at, _refuse)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


async def _grant(agent: str, endpoint: Endpoint) -> ProxyVerdict:
    return ProxyVerdict(endpoint.host == DnsName("files.test"), "not granted")


@pytest.mark.skipif(bubblewrap_problem() is not None, reason="the bridge runs under bubblewrap")
@pytest.mark.parametrize("bridge", ["native", "python"])
async def test_both_bridges_carry_a_sandboxed_command_to_the_proxy(
    bridge: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = layers.host_layout()
    if bridge == "native" and layout.native_bridge is None:
        pytest.skip("no C compiler built the native bridge here")
    if bridge == "python":
        layout = dataclasses.replace(layout, native_bridge=None)
    monkeypatch.setattr(runner, "host_layout", lambda: layout)
    served = tmp_path / "served"
    served.mkdir()
    (served / "hello.txt").write_text("through the bridge\n")
    proxy = NetworkProxy(_grant, asyncio.get_running_loop(), {"files.test": "127.0.0.1"})
    path = tmp_path / "net" / "ada.sock"
    await asyncio.to_thread(proxy.listen, "ada", path)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    policy = SandboxPolicy.executing(workspace, network=Proxied(path))
    try:
        with local_server(served) as port:
            # The command's own `wait` returns: the bridge's server is not its child.
            command = f"curl -sS http://files.test:{port}/hello.txt; sleep 0 & wait; echo done"
            result = await run_sandboxed(["bash", "-c", command], policy, timeout=30)
    finally:
        await asyncio.to_thread(proxy.close)
    assert result.exit_code == 0, result
    assert result.stdout == "through the bridge\ndone\n"


async def _allow_all(agent: str, endpoint: Endpoint) -> ProxyVerdict:
    return ProxyVerdict(True)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "169.254.169.254", "[::1]", "0.0.0.0"])
async def test_a_granted_name_for_an_address_of_this_host_is_refused(
    proxy_at: Callable[..., Path], host: str
) -> None:
    path = await asyncio.to_thread(proxy_at, _allow_all)
    answer = await _exchange(path, f"CONNECT {host}:9 HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403 "), answer
    assert b"no granted host leads to this host or its cloud" in answer


async def test_a_held_connection_goes_on_when_the_answer_comes(
    proxy_at: Callable[..., Path],
) -> None:
    answered, asked = asyncio.Event(), asyncio.Event()

    async def later(agent: str, endpoint: Endpoint) -> ProxyVerdict:
        asked.set()
        await answered.wait()
        return ProxyVerdict(True)

    listener = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    path = await asyncio.to_thread(proxy_at, later, {"files.test": "127.0.0.1"})
    door, proxy_port = _door(path)
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(f"CONNECT files.test:{port} HTTP/1.1\r\n\r\n".encode())
    await writer.drain()
    await asked.wait()
    answered.set()
    assert await reader.readline() == b"HTTP/1.1 200 Connection established\r\n"
    writer.close()
    door.close()
    listener.close()


@pytest.mark.skipif(bubblewrap_problem() is not None, reason="the bridge runs under bubblewrap")
def test_an_mcp_server_of_a_plan_bound_agent_gets_the_proxy(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    path = tmp_path / "net" / "ada.sock"
    loop = asyncio.new_event_loop()
    proxy = NetworkProxy(_grant, loop, {})
    proxy.listen("ada", path)
    policy = SandboxPolicy.executing(workspace, network=Proxied(path))
    try:
        spawned = server_spawn(["server", "--stdio"], policy)
    finally:
        proxy.close()
        loop.close()
    spawned.cleanup()
    assert spawned.env["HTTPS_PROXY"] == "http://127.0.0.1:3128"
    assert spawned.argv[:2] == ["bwrap", "--args"]
    door = spawned.argv[spawned.argv.index("3128") + 1]
    assert int(door) in spawned.pass_fds
    assert spawned.argv[-3:] == ["--", "server", "--stdio"]
    assert not any(str(tmp_path) in part for part in spawned.argv)


async def test_a_door_that_hands_over_anything_but_a_listener_is_closed(
    proxy_at: Callable[..., Path], tmp_path: Path
) -> None:
    path = await asyncio.to_thread(proxy_at, _allow_all)
    for handed in ("a file", "a connected socket", "no descriptor"):
        door = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        door.connect(str(path))
        if handed == "a file":
            with (tmp_path / "f").open("w") as file:
                socket.send_fds(door, [proxy_door.HAND_OFF], [file.fileno()])
        elif handed == "a connected socket":
            one, other = socket.socketpair()
            socket.send_fds(door, [proxy_door.HAND_OFF], [one.fileno()])
            one.close()
            assert await asyncio.to_thread(other.recv, 1) == b""
            other.close()
        else:
            door.sendall(b"GET http://files.test/ HTTP/1.1\r\n\r\n")
        door.settimeout(10)
        with contextlib.suppress(ConnectionResetError):  # closed with the request unread
            assert await asyncio.to_thread(door.recv, 1) == b""
        door.close()


async def test_a_handed_listener_is_served_only_while_its_door_is_open(
    proxy_at: Callable[..., Path],
) -> None:
    path = await asyncio.to_thread(proxy_at, _refuse)
    door, port = _door(path)
    door.close()
    for _ in range(100):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except ConnectionError:
            return  # refused, or reset from the backlog as the listener closed
        writer.close()
        await asyncio.sleep(0.05)
    raise AssertionError("the listener was still served after its door closed")


def test_trying_the_native_bridge_leaves_no_server_behind() -> None:
    wall_helper.native_bridge.cache_clear()
    built = wall_helper.native_bridge()
    if built is None:
        pytest.skip("no C compiler built the native bridge here")
    # Run from the host's path (inside a sandbox the bridge runs as /run/plancord/net-bridge).
    assert [line for line in _command_lines() if line.split(b"\0")[0] == built.encode()] == []


def _command_lines() -> list[bytes]:
    lines = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            lines.append(path.read_bytes())
        except OSError:
            continue  # the process ended meanwhile
    return lines


async def test_a_connection_is_settled_as_made_or_refused_after_the_decision(
    proxy_at: Callable[..., Path],
) -> None:
    settled: list[tuple[str, str | None]] = []

    async def granted(agent: str, endpoint: Endpoint) -> ProxyVerdict:
        async def settle(refused: str | None) -> None:
            settled.append((endpoint.shown, refused))

        return ProxyVerdict(True, settle=settle)

    listener = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    path = await asyncio.to_thread(proxy_at, granted, {"files.test": "127.0.0.1"})
    made = await _exchange(path, f"CONNECT files.test:{port} HTTP/1.1\r\n\r\n".encode())
    refused = await _exchange(path, b"CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n")
    listener.close()
    assert made.startswith(b"HTTP/1.1 200 ")
    assert refused.startswith(b"HTTP/1.1 403 127.0.0.1 is a loopback address")
    assert settled == [
        (f"files.test:{port}", None),
        (
            "127.0.0.1",
            "127.0.0.1 is a loopback address of this host; no granted host leads "
            "to this host or its cloud",
        ),
    ]
