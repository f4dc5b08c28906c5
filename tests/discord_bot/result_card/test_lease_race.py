"""Two services with different host identities over one database and one workspace (the
documented two-container setup, or the operator's shell in another container): a Merge
under way in the bot, its git held, and a Discard from the other. The Discard is refused as
in progress while the bot's lease lives; once the bot has been stopped past its lease, the
Discard takes the decision over, and the bot, waking, runs no git of it."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from plancord.agent.execution import lease as leases
from plancord.agent.execution.branch import ExecutionBranch
from plancord.command.operator import open_services
from plancord.command.operator_results import result_discard
from plancord.core.execution import ResultState
from tests.discord_bot.result_card.completed import completed, git, record, reply, result_card
from tests.discord_bot.result_card.test_intents import Kill
from tests.world import PlanScene


class HeldMerge:
    """The bot's Merge stopped on its way into git until ``release``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reached, self.released = asyncio.Event(), asyncio.Event()
        original = ExecutionBranch.merge

        async def held(branch: ExecutionBranch, *args: Any) -> Any:
            self.reached.set()
            await self.released.wait()
            return await original(branch, *args)

        monkeypatch.setattr(ExecutionBranch, "merge", held)


async def _discard_from_another_host(scene: PlanScene, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as elsewhere:
        elsewhere.setattr(socket, "gethostname", lambda: "plancord-bot-1")
        async with open_services(scene.app.config) as services:
            try:
                return await result_discard(services, "ada")
            except Exception as exc:
                return str(exc)


async def test_a_live_merge_on_one_host_is_in_progress_for_a_discard_on_another(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    held = HeldMerge(monkeypatch)
    merging = asyncio.ensure_future(scene.ana.click(result_card(scene), label="Merge"))
    await held.reached.wait()

    answer = await _discard_from_another_host(scene, monkeypatch)

    assert "already under way" in answer and "Nothing changed" in answer
    assert "finished" not in answer and "interrupted" not in answer
    assert git(workspace, "branch", "--list", found.branch).strip() != ""
    held.released.set()
    merged = reply(await merging)
    assert "as a fast-forward" in merged
    after = await record(scene)
    assert after.result is ResultState.MERGED and after.decided_by_name == "ana"
    assert git(workspace, "rev-parse", "main").strip() == found.result_commit
    assert (workspace / "greet.py").exists()


async def test_a_merge_stopped_past_its_lease_is_taken_over_and_runs_no_git_when_it_wakes(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(leases, "LEASE_SECONDS", 1.0)
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    held = HeldMerge(monkeypatch)
    merging = asyncio.ensure_future(scene.ana.click(result_card(scene), label="Merge"))
    await held.reached.wait()
    assert scene.app.lease is not None
    scene.app.lease.pause_heartbeat()  # SIGSTOP: the bot renews nothing ...
    await asyncio.sleep(1.5)  # ... past its lease

    taken = await _discard_from_another_host(scene, monkeypatch)
    assert "was interrupted before git changed anything" in taken
    again = await _discard_from_another_host(scene, monkeypatch)
    assert "Discarded" in again
    held.released.set()  # the bot wakes inside its Merge
    woke = reply(await merging)

    assert "lost its lease" in woke and "ran no more git" in woke
    after = await record(scene)
    assert after.result is ResultState.DISCARDED
    assert git(workspace, "rev-parse", "main").strip() == found.base_commit
    assert git(workspace, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert not (workspace / "greet.py").exists()
    decided = [a for a, _ in await scene.audit() if a in ("result-merge", "result-discard")]
    assert decided == ["result-discard"]


async def test_a_merge_killed_with_its_lease_live_is_recovered_once_the_lease_expired(
    plan_scene: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGKILL gives no lease up: the restarted bot finds the Merge still owned, leaves
    it, and takes it over once that lease has expired, telling the channel."""
    # Long enough that the restarted bot's own lease holds on a loaded machine.
    monkeypatch.setattr(leases, "LEASE_SECONDS", 3.0)
    scene, workspace = await completed(plan_scene)
    found = await record(scene)
    card = result_card(scene)
    await Kill(monkeypatch, "merge", after_git=False).during(
        lambda: scene.ana.click(card, label="Merge")
    )

    async def killed(lease: leases.ProcessLease) -> None:
        lease.pause_heartbeat()  # dead: nothing renews it, nothing gives it up

    with monkeypatch.context() as dead:
        dead.setattr(leases.ProcessLease, "close", killed)
        await scene.restart()
    assert (await record(scene)).result is ResultState.WAITING
    await asyncio.sleep(3.5)  # the killed bot's lease expires
    await scene.env.advance_time(4)
    await scene.app.runtime.results.settled()
    await scene.env.settle()

    assert [t for t in scene.bot_texts() if "was interrupted before git changed anything" in t]
    assert git(workspace, "rev-parse", "main").strip() == found.base_commit
    merged = reply(await scene.ana.click(result_card(scene), label="Merge"))
    assert "as a fast-forward" in merged
