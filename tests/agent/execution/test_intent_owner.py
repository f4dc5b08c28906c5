"""Who carries out an intent: this process's open results services, another process that is
still running (the same pid and start time), and nobody else."""

from __future__ import annotations

import os
import socket

from plancord.agent.execution.intent_owner import new_owner, owner_alive, release


def test_an_open_service_is_alive_and_a_closed_one_is_not() -> None:
    owner = new_owner()
    assert owner_alive(owner)
    release(owner)
    assert not owner_alive(owner)


def test_another_process_counts_by_its_pid_and_start_time() -> None:
    parent = os.getppid()
    with open(f"/proc/{parent}/stat", "rb") as handle:
        started = handle.read().decode().rpartition(")")[2].split()[19]
    host = socket.gethostname()

    assert owner_alive(f"{host}:{parent}:{started}:x")
    assert not owner_alive(f"{host}:{parent}:{int(started) + 1}:x")  # the pid was reused
    assert not owner_alive(f"{host}:999999999:{started}:x")  # gone
    assert not owner_alive(f"elsewhere-{host}:{parent}:{started}:x")  # not on this host
