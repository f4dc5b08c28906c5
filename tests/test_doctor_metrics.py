"""``plancord doctor`` checks the metrics endpoint when it is on: free to bind, served by a
running plancord, or taken by another program."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from plancord.config import Config
from plancord.core.ports import SystemClock
from plancord.doctor.findings import Status
from plancord.doctor.metrics import check_metrics
from plancord.metrics import MetricsEndpoint, PlancordCollector
from plancord.storage.db import Database
from plancord.storage.engines import migrate_database


def config(port: int, enabled: bool = True) -> Config:
    return Config.model_validate({"metrics": {"enabled": enabled, "port": port}})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_off_is_not_checked() -> None:
    assert check_metrics(config(9464, enabled=False)) == []


def test_a_free_port() -> None:
    port = free_port()
    (found,) = check_metrics(config(port))
    assert found.status is Status.OK
    assert f"127.0.0.1:{port} is free" in found.line()


def test_a_port_another_program_holds() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        (found,) = check_metrics(config(port))
    assert found.status is Status.FAIL
    assert f"127.0.0.1:{port} is taken by another program" in found.line()
    assert "metrics.port" in found.line()


async def test_a_running_plancord_serving_it(tmp_path: Path) -> None:
    await migrate_database(tmp_path / "plancord.db")
    async with await Database.open(tmp_path / "plancord.db") as db:
        collector = PlancordCollector(asyncio.get_running_loop(), db, SystemClock(), {}, dict)
        endpoint = MetricsEndpoint(collector)
        endpoint.start("127.0.0.1", 0)
        try:
            (found,) = await asyncio.to_thread(check_metrics, config(endpoint.port))
        finally:
            await endpoint.stop()
    assert found.status is Status.OK
    assert "a running plancord serves" in found.line()


def test_every_interface_is_warned() -> None:
    settings = {"enabled": True, "host": "0.0.0.0", "port": free_port()}
    found = check_metrics(Config.model_validate({"metrics": settings}))
    assert [check.status for check in found] == [Status.OK, Status.WARN]
    assert "listens on every interface" in found[1].line()
    assert "metrics.host: 127.0.0.1" in found[1].line()
