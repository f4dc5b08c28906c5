"""The parts PlanningService is built from, each built alone over a real store: the commit
path, the approval ballot and the deadlines, with only the collaborators each is given."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from plancord.core.approval_votes import ApprovalVotes
from plancord.core.ballot import ApprovalVote
from plancord.core.deadlines import Deadlines
from plancord.core.errors import AlreadyDecided, VersionConflict
from plancord.core.planning import Actor, AuditAction, EntrySource, Phase, PlanRef
from plancord.core.ports import PlanningChange, StaticSettings
from plancord.core.service import PlanningService
from plancord.core.settings import PlanModeSettings
from plancord.core.transition_runner import TransitionRunner
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock, RecordingNotifier

ANA = Actor.user(42, "ana")
BOB = Actor.user(7, "bob")
RITA = Actor.user(9, "rita", roles=frozenset({"reviewers"}))
PLAN = {"summary": "Add a health endpoint", "steps": [{"description": "Add /health"}]}


class Members:
    """The member directory as a dict: who each person is now; someone absent is unknown."""

    def __init__(self, *people: Actor) -> None:
        self.now = {person.id: person for person in people}

    async def member(self, agent: str, user_id: str) -> Actor | None:
        return self.now.get(user_id)


def names(votes: Sequence[ApprovalVote]) -> list[str]:
    return [vote.voter_name for vote in votes]


async def submitted(service: PlanningService, agent: str) -> PlanRef:
    await service.enter(agent, source=EntrySource.USER, actor=ANA)
    revision = await service.submit(agent, PLAN)
    return PlanRef(agent=agent, plan_id=revision.plan_id, revision=revision.revision)


async def test_the_runner_saves_then_tells_every_listener_even_after_one_fails(
    store: SqlStore, clock: ManualClock, agent: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        async def planning_changed(self, change: PlanningChange) -> None:
            raise RuntimeError("discord is down")

    after_broken = RecordingNotifier()
    runner = TransitionRunner(store, clock, [Broken(), after_broken])
    rearmed: list[str] = []
    runner.on_deadlines_changed(lambda: rearmed.append("rearm"))
    before = await store.load_state(agent)
    new = before.cleared(phase=Phase.GATHERING, task="explore")
    after = await runner.commit(before, new, "entered", ANA, {"task": "explore", "none": None})
    assert after.version == before.version + 1 and after.updated_at == clock.now()
    assert (await store.load_state(agent)).phase is Phase.GATHERING
    assert rearmed == ["rearm"]
    audit = (await store.list_audit(agent))[-1]
    assert (audit.action, audit.actor, audit.detail) == ("entered", ANA.label, {"task": "explore"})
    await runner.notify(PlanningChange(AuditAction.ENTERED, before, after, ANA, None, {}))
    assert after_broken.actions == [AuditAction.ENTERED]
    assert "discord is down" in caplog.text


async def test_the_runner_names_who_won_a_lost_decision_race(
    store: SqlStore, clock: ManualClock, settings: StaticSettings, agent: str
) -> None:
    service = PlanningService(store, clock, settings)
    ref = await submitted(service, agent)
    waiting = await store.load_state(agent)
    await service.approve(ref, ANA)
    runner = TransitionRunner(store, clock)
    with pytest.raises(VersionConflict):
        await runner.commit(waiting, waiting.cleared(), "rejected", BOB, {})
    with pytest.raises(AlreadyDecided, match="already approved by ana") as info:
        await runner.commit(waiting, waiting.cleared(), "rejected", BOB, {}, race_ref=ref)
    assert info.value.revision == ref.revision
    assert (await store.load_state(agent)).phase is Phase.EXECUTING


async def test_a_second_click_counts_once_on_the_ballot(
    store: SqlStore, clock: ManualClock, settings: StaticSettings, agent: str
) -> None:
    service = PlanningService(store, clock, settings)
    ref = await submitted(service, agent)
    state = await store.load_state(agent)
    revision = await store.get_revision(ref.plan_id, ref.revision)
    assert revision is not None
    listener = RecordingNotifier()
    runner = TransitionRunner(store, clock, [listener])
    votes = ApprovalVotes(store, clock, runner, Members(ANA, RITA))
    three = PlanModeSettings(approver_roles=("reviewers",), approvals=3)
    two = three.model_copy(update={"approvals": 2})

    assert names(await votes.cast(ref, state, revision, ANA, three)) == ["ana"]
    assert names(await votes.cast(ref, state, revision, ANA, three)) == ["ana"]
    assert names(await votes.cast(ref, state, revision, RITA, two)) == ["ana", "rita"]
    assert listener.actions == [AuditAction.APPROVAL_VOTE]  # the second vote completes it
    assert names(await votes.counted(ref, state, revision, two)) == ["ana", "rita"]


async def test_activity_moves_the_idle_deadline_only_while_gathering(
    store: SqlStore, clock: ManualClock, settings: StaticSettings, agent: str
) -> None:
    runner = TransitionRunner(store, clock)
    rearmed: list[str] = []
    runner.on_deadlines_changed(lambda: rearmed.append("rearm"))
    deadlines = Deadlines(store, clock, settings, runner)
    await deadlines.touch(agent)
    assert rearmed == []
    await PlanningService(store, clock, settings).enter(agent, source=EntrySource.USER, actor=ANA)
    clock.advance(minutes=5)
    await deadlines.touch(agent)
    timeout = (await settings.plan_mode_for(agent)).gathering_idle_timeout
    assert rearmed == ["rearm"]
    assert (await store.load_state(agent)).idle_deadline == clock.now() + timeout
    assert await deadlines.next_deadline() == clock.now() + timeout
    clock.advance(seconds=timeout.total_seconds())
    changes = await deadlines.fire_due()
    assert [c.action for c in changes] == [AuditAction.TIMED_OUT]
    assert (await store.load_state(agent)).phase is Phase.INACTIVE
