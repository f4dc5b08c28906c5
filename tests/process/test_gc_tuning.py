"""``GcTuning``: long-lived objects are frozen out of full collections, and cyclic garbage
among them is still collected by the periodic full pass."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from plancord.process.gc_tuning import GcTuning


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> tuple[Node, weakref.ref[Node]]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a, weakref.ref(a)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def frozen(obj: object) -> bool:
    """Whether ``obj`` is out of the collector's generations (the permanent one)."""
    return gc.is_tracked(obj) and not any(o is obj for o in gc.get_objects())


def test_startup_freezes_what_is_alive_and_collects_what_is_not() -> None:
    kept, _ = cycle()
    dropped, dead = cycle()
    del dropped
    GcTuning(idle=lambda: True).after_startup()
    assert dead() is None
    assert frozen(kept)
    assert gc.get_freeze_count() > 0


def test_a_refreeze_moves_new_survivors_out_of_full_collections() -> None:
    tuning = GcTuning(idle=lambda: True)
    tuning.after_startup()
    young, _ = cycle()
    assert not frozen(young)
    tuning.refreeze()
    assert frozen(young)


def test_cyclic_garbage_among_frozen_objects_waits_for_the_full_pass() -> None:
    clock = Clock()
    busy = True
    tuning = GcTuning(idle=lambda: not busy, full_every_seconds=100, monotonic=clock)
    tuning.after_startup()
    node, ref = cycle()
    tuning.refreeze()
    del node
    gc.collect()  # a full collection does not walk frozen objects
    assert ref() is not None

    clock.now = 150  # due, but an agent is working: only a refreeze
    tuning.tick()
    assert ref() is not None
    busy = False
    tuning.tick()
    assert ref() is None


def test_a_bot_that_is_never_idle_gets_the_full_pass_when_long_overdue() -> None:
    clock = Clock()
    tuning = GcTuning(idle=lambda: False, full_every_seconds=100, monotonic=clock)
    tuning.after_startup()
    node, ref = cycle()
    tuning.refreeze()
    del node
    clock.now = 399
    tuning.tick()
    assert ref() is not None
    clock.now = 400
    tuning.tick()
    assert ref() is None


async def test_the_task_refreezes_every_period_until_stopped() -> None:
    tuning = GcTuning(idle=lambda: True, refreeze_seconds=0.01)
    tuning.after_startup()
    young, _ = cycle()
    tuning.start()
    await asyncio.sleep(0.1)
    assert frozen(young)
    await tuning.stop()
    assert tuning._task is None
