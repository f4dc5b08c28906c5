"""A result's decision state and its Merge votes on both engines: opened once when the
execution ended, moved by a roll back, decided once at the version clicked, the card's
place found again, and votes kept once per voter and only while the result waits at the
version and pinned commit they bind to; the host's step commits kept by id, in order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plancord.core.ballot import ApprovalVote, VoteWrite
from plancord.core.execution import ExecutionRecord, ResultState, StepOutcome
from plancord.core.planning import AuditEntry
from plancord.storage.backend import Backend
from plancord.storage.executions import ExecutionStore
from plancord.storage.result_votes import ResultVoteStore
from plancord.storage.step_commits import StepCommitId, StepCommitStore

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
PINNED = "d" * 40
LATER = "e" * 40


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


def _vote(voter: str, version: int, commit: str = PINNED) -> tuple[ApprovalVote, AuditEntry]:
    vote = ApprovalVote(
        plan_id="p1", revision=version, sha256=commit, voter_id=voter, voter_name=voter, at=AT
    )
    audit = AuditEntry(at=AT, agent="ada", actor=f"user:{voter}", action="result-merge-vote")
    return vote, audit


async def test_a_result_opens_once_moves_and_is_decided_once(db: Backend) -> None:
    store = ExecutionStore(db)
    await store.begin(_record())
    assert not await store.open_result("p1", "42", "ana", PINNED)  # still running
    await store.end("p1", AT + timedelta(minutes=1), "completed", (StepOutcome.DONE,))

    assert await store.open_result("p1", "42", "ana", PINNED)
    assert not await store.open_result("p1", "43", "bob", LATER)
    waiting = await store.waiting_result("ada")
    assert waiting is not None and waiting.result is ResultState.WAITING
    assert (waiting.requested_by, waiting.result_version) == ("42", 1)
    assert waiting.result_commit == PINNED

    assert await store.result_moved("p1", 1, LATER)
    assert not await store.result_moved("p1", 1, PINNED)
    moved = await store.get("p1")
    assert moved is not None and (moved.result_version, moved.result_commit) == (2, LATER)
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
    await store.open_result("p1", "42", "ana", PINNED)

    assert await votes.record(*_vote("boss", 1)) is VoteWrite.RECORDED
    assert await votes.record(*_vote("boss", 1)) is VoteWrite.ALREADY
    assert await votes.record(*_vote("cara", 2)) is VoteWrite.CLOSED
    assert await votes.record(*_vote("cara", 1, LATER)) is VoteWrite.CLOSED
    assert [v.voter_id for v in await votes.for_version("p1", 1, PINNED)] == ["boss"]
    assert (await votes.for_version("p1", 1, PINNED))[0].sha256 == PINNED
    assert await votes.for_version("p1", 1, LATER) == []

    await store.result_moved("p1", 1, LATER)
    assert await votes.for_version("p1", 2, LATER) == []
    assert await votes.record(*_vote("cara", 2, LATER)) is VoteWrite.RECORDED


async def test_step_commits_are_kept_by_id_in_order_and_rolled_back(db: Backend) -> None:
    store = ExecutionStore(db)
    commits = StepCommitStore(db)
    await store.begin(_record())
    await commits.add_message("p1", "Add greeting module")
    await commits.add_message("p1", "and its test")
    found = await store.get("p1")
    assert found is not None and found.step_message == "Add greeting module\n\nand its test"

    await commits.committed("p1", 1, "1" * 40)
    await commits.committed("p1", 2, None)  # changed nothing: no commit
    await commits.committed("p1", 3, "3" * 40)
    await commits.committed("p1", 3, "4" * 40)
    after = await store.get("p1")
    assert after is not None and after.step_message is None
    assert await commits.commits("p1") == [
        StepCommitId(1, "1" * 40),
        StepCommitId(3, "3" * 40),
        StepCommitId(3, "4" * 40),
    ]

    await commits.keep_before("p1", 1)
    assert await commits.commits("p1") == [StepCommitId(1, "1" * 40)]
    assert await commits.rolled_back("p1") == frozenset({3})
    await commits.committed("p1", 2, "5" * 40)
    assert [c.commit for c in await commits.commits("p1")] == ["1" * 40, "5" * 40]
