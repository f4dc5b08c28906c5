"""A result's decision state and its Merge votes on both engines: opened once when the
execution ended, moved by a roll back, decided once at the version clicked, the card's
place found again, and votes kept once per voter and only while the result waits at the
version they bind to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.execution import ExecutionRecord, ResultState, StepOutcome
from plancord.core.planning import AuditEntry
from plancord.storage.backend import Backend
from plancord.storage.executions import ExecutionStore
from plancord.storage.result_votes import ResultVoteStore

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _record() -> ExecutionRecord:
    return ExecutionRecord(
        agent="ada",
        plan_id="p1",
        revision=1,
        branch="plancord/p1-v1",
        base="main",
        base_commit="a" * 40,
        reviewed_commit="b" * 40,
        reviewed_index="c" * 40,
        steps=(StepOutcome.CURRENT,),
        started_at=AT,
    )


def _vote(voter: str, version: int) -> tuple[ApprovalVote, AuditEntry]:
    vote = ApprovalVote(
        plan_id="p1", revision=version, sha256="result", voter_id=voter, voter_name=voter, at=AT
    )
    audit = AuditEntry(at=AT, agent="ada", actor=f"user:{voter}", action="result-merge-vote")
    return vote, audit


async def test_a_result_opens_once_moves_and_is_decided_once(db: Backend) -> None:
    store = ExecutionStore(db)
    await store.begin(_record())
    assert not await store.open_result("p1", "42", "ana")  # still running
    await store.end("p1", AT + timedelta(minutes=1), "completed", (StepOutcome.DONE,))

    assert await store.open_result("p1", "42", "ana")
    assert not await store.open_result("p1", "43", "bob")
    waiting = await store.waiting_result("ada")
    assert waiting is not None and waiting.result is ResultState.WAITING
    assert (waiting.requested_by, waiting.result_version) == ("42", 1)

    assert await store.result_moved("p1", 1)
    assert not await store.result_moved("p1", 1)
    await store.set_card("p1", 10**18, 10**18 + 1)
    found = await store.by_card(10**18, 10**18 + 1)
    assert found is not None and found.card_message == 10**18 + 1

    at = AT + timedelta(minutes=2)
    assert not await store.decide_result("p1", 1, ResultState.MERGED, "ana", at, "merged")
    assert await store.decide_result("p1", 2, ResultState.MERGED, "ana", at, "merged")
    assert not await store.decide_result("p1", 3, ResultState.DISCARDED, "bob", at, "no")
    decided = await store.get("p1")
    assert decided is not None
    assert (decided.result, decided.decided_by_name, decided.decided_at) == (
        ResultState.MERGED,
        "ana",
        at,
    )
    assert await store.waiting_result("ada") is None and await store.waiting_results() == []


async def test_votes_count_once_and_only_while_the_result_waits(db: Backend) -> None:
    store = ExecutionStore(db)
    votes = ResultVoteStore(db)
    await store.begin(_record())
    await store.end("p1", AT, "completed", (StepOutcome.DONE,))
    assert await votes.record(*_vote("ana", 1)) is VoteWrite.CLOSED
    await store.open_result("p1", "42", "ana")

    assert await votes.record(*_vote("boss", 1)) is VoteWrite.RECORDED
    assert await votes.record(*_vote("boss", 1)) is VoteWrite.ALREADY
    assert await votes.record(*_vote("cara", 2)) is VoteWrite.CLOSED
    assert [v.voter_id for v in await votes.for_version("p1", 1)] == ["boss"]

    await store.result_moved("p1", 1)
    assert await votes.for_version("p1", 2) == []
    assert await votes.record(*_vote("cara", 2)) is VoteWrite.RECORDED
