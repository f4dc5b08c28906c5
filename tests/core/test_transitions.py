"""The transition table as data: every (phase, event) pair, pure and through the service."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable

import pytest

from plancord.core.errors import InvalidTransition
from plancord.core.planning import (
    TRANSITIONS,
    Actor,
    EntrySource,
    Phase,
    PlanEvent,
    PlanRef,
    next_phase,
)
from plancord.core.service import PlanningService
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock

EXPECTED = {
    (Phase.INACTIVE, PlanEvent.ENTER): Phase.GATHERING,
    (Phase.GATHERING, PlanEvent.SUBMIT): Phase.SUBMITTED,
    (Phase.SUBMITTED, PlanEvent.APPROVE): Phase.EXECUTING,
    (Phase.SUBMITTED, PlanEvent.REQUEST_CHANGES): Phase.GATHERING,
    (Phase.SUBMITTED, PlanEvent.REJECT): Phase.INACTIVE,
    (Phase.GATHERING, PlanEvent.CANCEL): Phase.INACTIVE,
    (Phase.SUBMITTED, PlanEvent.CANCEL): Phase.INACTIVE,
    (Phase.GATHERING, PlanEvent.TIMEOUT): Phase.INACTIVE,
    (Phase.SUBMITTED, PlanEvent.TIMEOUT): Phase.INACTIVE,
    (Phase.EXECUTING, PlanEvent.COMPLETE): Phase.INACTIVE,
    (Phase.EXECUTING, PlanEvent.CANCEL): Phase.INACTIVE,
    (Phase.EXECUTING, PlanEvent.AMEND): Phase.SUBMITTED,
    (Phase.SUBMITTED, PlanEvent.REVISE): Phase.SUBMITTED,
}

ALL_PAIRS = list(itertools.product(Phase, PlanEvent))
ANA = Actor.user(42, "ana")

PLAN = {"summary": "Tidy the README", "steps": [{"description": "Fix typos", "risk": "low"}]}
EDITED = {"summary": "Tidy the README", "steps": [{"description": "Fix typos only", "risk": "low"}]}


def test_the_table_is_exactly_the_design() -> None:
    assert dict(TRANSITIONS) == EXPECTED


@pytest.mark.parametrize(("phase", "event"), ALL_PAIRS)
def test_next_phase_for_every_pair(phase: Phase, event: PlanEvent) -> None:
    if (phase, event) in EXPECTED:
        assert next_phase(phase, event) is EXPECTED[(phase, event)]
    else:
        with pytest.raises(InvalidTransition) as info:
            next_phase(phase, event)
        message = str(info.value)
        assert message.startswith("Cannot ")
        assert message.endswith(".")
        assert "_" not in message


async def bring_to(service: PlanningService, agent: str, phase: Phase) -> None:
    if phase is Phase.INACTIVE:
        return
    await service.enter(agent, source=EntrySource.USER, actor=ANA, task="tidy")
    if phase is Phase.GATHERING:
        return
    await service.submit(agent, PLAN)
    if phase is Phase.SUBMITTED:
        return
    await approve_current(service, agent)


async def current_ref(service: PlanningService, agent: str) -> PlanRef:
    state = (await service.status(agent)).state
    return PlanRef(agent=agent, plan_id=state.plan_id or "nope", revision=max(state.revision, 1))


async def approve_current(service: PlanningService, agent: str) -> None:
    await service.approve(await current_ref(service, agent), ANA)


def performer(
    event: PlanEvent, service: PlanningService, clock: ManualClock, agent: str
) -> Callable[[], Awaitable[object]]:
    async def perform() -> object:
        if event is PlanEvent.ENTER:
            return await service.enter(agent, source=EntrySource.USER, actor=ANA, task="again")
        if event is PlanEvent.SUBMIT:
            return await service.submit(agent, PLAN)
        if event is PlanEvent.APPROVE:
            return await service.approve(await current_ref(service, agent), ANA)
        if event is PlanEvent.REQUEST_CHANGES:
            return await service.request_changes(await current_ref(service, agent), ANA, "more")
        if event is PlanEvent.REJECT:
            return await service.reject(await current_ref(service, agent), ANA, "no")
        if event is PlanEvent.CANCEL:
            return await service.cancel(agent, ANA)
        if event is PlanEvent.AMEND:
            return await service.amend(agent, PLAN)
        if event is PlanEvent.REVISE:  # a member's direct edit of the revision shown
            shown = (await service.status(agent)).revision
            ref = shown.exact_ref if shown is not None else await current_ref(service, agent)
            return await service.edit(ref, EDITED, ANA)
        if event is PlanEvent.COMPLETE:
            return await service.complete(agent, Actor.agent(agent), "done")
        clock.advance(days=1)
        return await service.fire_due()

    return perform


@pytest.mark.parametrize(("phase", "event"), ALL_PAIRS)
async def test_every_pair_through_the_service(
    service: PlanningService,
    store: SqlStore,
    clock: ManualClock,
    agent: str,
    phase: Phase,
    event: PlanEvent,
) -> None:
    await bring_to(service, agent, phase)
    before = await store.load_state(agent)
    audit_before = len(await store.list_audit(agent))
    perform = performer(event, service, clock, agent)

    if (phase, event) in EXPECTED:
        await perform()
        after = await store.load_state(agent)
        assert after.phase is EXPECTED[(phase, event)]
        assert after.version == before.version + 1
        audit = await store.list_audit(agent)
        assert len(audit) == audit_before + 1
        assert audit[-1].plan_id == (before.plan_id or after.plan_id)
    elif event is PlanEvent.ENTER:
        outcome = await perform()
        assert outcome.entered is False  # type: ignore[attr-defined]
        assert await store.load_state(agent) == before
    elif event is PlanEvent.TIMEOUT:
        assert await perform() == []
        assert await store.load_state(agent) == before
    else:
        with pytest.raises(InvalidTransition) as info:
            await perform()
        assert str(info.value)
        assert await store.load_state(agent) == before
        assert len(await store.list_audit(agent)) == audit_before


@pytest.mark.parametrize(
    "actor",
    [
        Actor.user(42, "ana"),
        Actor.user("7", "bo (night shift)"),
        Actor.agent("ada"),
        Actor.operator(),
        Actor.scheduler(),
        Actor.policy("require_approval=false"),
    ],
)
def test_an_audit_label_reads_back_as_its_actor(actor: Actor) -> None:
    back = Actor.from_label(actor.label)
    assert back is not None
    assert (back.kind, back.id, back.name, back.label) == (
        actor.kind,
        actor.id,
        actor.name,
        actor.label,
    )


@pytest.mark.parametrize("label", ["", "user:42", "agent:", "policy:", "robot:x", "nobody"])
def test_a_label_plancord_does_not_write_names_no_actor(label: str) -> None:
    assert Actor.from_label(label) is None
