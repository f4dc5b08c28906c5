"""The process's sub-agent slots shared between agents: one agent's many questions cannot
hold every slot while another agent's question waits."""

from __future__ import annotations

import asyncio

from plancord.agent.subagents.slots import FairSlots


async def test_an_agent_alone_gets_every_slot() -> None:
    slots = FairSlots(4)
    held = asyncio.Event()
    release = asyncio.Event()
    inside = 0

    async def work() -> None:
        nonlocal inside
        async with slots.slot("ada"):
            inside += 1
            if inside == 4:
                held.set()
            await release.wait()

    tasks = [asyncio.create_task(work()) for _ in range(5)]
    await asyncio.wait_for(held.wait(), 5)
    assert slots.running == 4 and slots.would_wait("ada")
    release.set()
    await asyncio.gather(*tasks)
    assert slots.running == 0


async def test_a_second_agent_gets_the_next_free_slot_and_its_share() -> None:
    slots = FairSlots(4)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in ("ada-1", "ada-2", "ada-3", "ada-4")}
    started = asyncio.Event()

    async def ada(name: str) -> None:
        async with slots.slot("ada"):
            order.append(name)
            if len(order) == 4:
                started.set()
            await gates[name].wait()

    async def queued(agent: str, name: str) -> None:
        async with slots.slot(agent):
            order.append(name)

    first = [asyncio.create_task(ada(f"ada-{n}")) for n in range(1, 5)]
    await asyncio.wait_for(started.wait(), 5)
    later = asyncio.create_task(queued("ada", "ada-5"))
    await asyncio.sleep(0)
    bob = [asyncio.create_task(queued("bob", f"bob-{n}")) for n in range(1, 3)]
    await asyncio.sleep(0)
    assert slots.would_wait("bob")

    gates["ada-1"].set()
    gates["ada-2"].set()
    await asyncio.wait_for(asyncio.gather(*bob), 5)
    # bob's two questions got the two slots ada freed, ahead of ada's fifth, which
    # came first but whose agent already held its share
    assert order[4:6] == ["bob-1", "bob-2"]
    gates["ada-3"].set()
    gates["ada-4"].set()
    await asyncio.wait_for(asyncio.gather(*first, later), 5)
    assert order[-1] == "ada-5" and slots.running == 0
