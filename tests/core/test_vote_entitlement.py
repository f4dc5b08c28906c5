"""A vote counts only if its voter may still approve when the votes are counted: each voter
is read again through the member directory and held to the approval policy and the state as
they are then. A lost approver role, a voter nobody can read again, a missing directory and
a policy that now excludes the requester all take a vote out of the count; a click the
policy refuses never becomes a vote, so it neither counts nor freezes the answers."""

from __future__ import annotations

import pytest

from plancord.core.errors import NotAuthorised
from plancord.core.plan_answers import AnswerOutcome, PlanAnswer
from plancord.core.planning import Actor, EntrySource, Phase, PlanRef
from plancord.core.ports import StaticSettings
from plancord.core.service import PlanningService
from plancord.core.settings import ApprovalPolicy, PlanModeSettings
from plancord.storage.plan_answers import PlanAnswerStore
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock
from tests.core.test_collaborators import ANA, BOB, RITA, Members, submitted

CARL = Actor.user(11, "carl", roles=frozenset({"reviewers"}))
DORA = Actor.user(12, "dora", roles=frozenset({"reviewers"}))
TWO = PlanModeSettings(approver_roles=("reviewers",), approvals=2)
PLAN = {
    "summary": "Deploy",
    "steps": [{"description": "Write deploy.sh"}],
    "questions": [{"question": "Where first?", "choices": ["staging", "production"]}],
}


def service_with(
    store: SqlStore, clock: ManualClock, members: Members | None, settings: StaticSettings
) -> PlanningService:
    return PlanningService(store, clock, settings, members=members)


async def test_a_voter_who_lost_the_approver_role_no_longer_counts(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    members = Members(ANA, RITA, CARL, DORA)
    service = service_with(store, clock, members, StaticSettings(TWO))
    ref = await submitted(service, agent)
    assert (await service.approve(ref, RITA)).phase is Phase.SUBMITTED
    members.now[RITA.id] = Actor.user(RITA.id, "rita")  # the reviewers role was taken away

    assert (await service.approve(ref, CARL)).phase is Phase.SUBMITTED
    assert await service.approvals(ref) == ["carl"]

    state = await service.approve(ref, DORA)
    assert state.phase is Phase.EXECUTING and state.approved_by_name == "dora"


async def test_a_voter_who_cannot_be_read_again_does_not_count(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    members = Members(ANA, RITA, CARL)
    service = service_with(store, clock, members, StaticSettings(TWO))
    ref = await submitted(service, agent)
    await service.approve(ref, RITA)
    del members.now[RITA.id]  # left the server, or the server cannot be read

    assert (await service.approve(ref, CARL)).phase is Phase.SUBMITTED
    assert await service.approvals(ref) == ["carl"]


async def test_without_a_member_directory_only_the_voter_at_hand_counts(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    service = service_with(store, clock, None, StaticSettings(TWO))
    ref = await submitted(service, agent)
    await service.approve(ref, RITA)

    assert (await service.approve(ref, CARL)).phase is Phase.SUBMITTED
    assert await service.approvals(ref) == []


async def test_the_requester_s_vote_stops_counting_once_four_eyes_applies(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    settings = StaticSettings(TWO)
    service = service_with(store, clock, Members(ANA, RITA, CARL), settings)
    ref = await submitted(service, agent)  # ana asked for the plan
    assert (await service.approve(ref, ANA)).phase is Phase.SUBMITTED
    settings.settings = TWO.model_copy(update={"approval": ApprovalPolicy.APPROVER})

    assert (await service.approve(ref, RITA)).phase is Phase.SUBMITTED
    assert await service.approvals(ref) == ["rita"]
    assert (await service.approve(ref, CARL)).phase is Phase.EXECUTING


async def test_a_refused_click_writes_no_vote_and_leaves_the_answers_open(
    store: SqlStore, clock: ManualClock, agent: str
) -> None:
    service = service_with(store, clock, Members(ANA, BOB, RITA), StaticSettings(TWO))
    await service.enter(agent, source=EntrySource.USER, actor=ANA)
    revision = await service.submit(agent, PLAN)
    ref = PlanRef(agent=agent, plan_id=revision.plan_id, revision=1)

    for _ in range(3):
        with pytest.raises(NotAuthorised):
            await service.approve(ref, BOB)

    assert await store.list_votes(ref.plan_id, 1, revision.sha256) == []
    refused = [a for a in await store.list_audit(agent) if a.action == "decision-refused"]
    assert len(refused) == 3
    pick = PlanAnswer(
        plan_id=ref.plan_id,
        revision=1,
        question=0,
        answer="staging",
        by=ANA.label,
        by_name="ana",
        at=clock.now(),
    )
    assert await PlanAnswerStore(store.db).record(pick, agent, "?") is AnswerOutcome.KEPT
