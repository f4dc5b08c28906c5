"""The executions of approved plans (``core.execution``): the branch each runs on, the step
the host keeps as current with each step's outcome, and the commands and drift events in
order. The host writes them as it observes calls; the completion card reads them back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from plancord.core.authority import Answer
from plancord.core.changes import ChangeKind
from plancord.core.execution import (
    DriftDecision,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    ResultState,
    StepIndex,
    StepNumber,
    StepOutcome,
)
from plancord.storage.backend import Backend, Tx
from plancord.storage.changes import append_change
from plancord.storage.codec import parse_required_ts, parse_ts, ts

_INSERT = (
    "INSERT INTO executions (plan_id, agent, revision, branch, base, base_commit, "
    "reviewed_commit, reviewed_index, current_step, steps, waiting_checkpoint, started_at, "
    "ended_at, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
RESULT_MOVED = (
    "UPDATE executions SET result_version = result_version + 1, result_commit = ? "
    "WHERE plan_id = ? AND result = 'waiting' AND result_version = ?"
)
"""Pin a waiting result anew: ``(commit, plan_id, version)``."""
DECIDE_RESULT = (
    "UPDATE executions SET result = ?, result_version = result_version + 1, "
    "decided_by_name = ?, decided_at = ?, outcome = ? "
    "WHERE plan_id = ? AND result = 'waiting' AND result_version = ?"
)
"""Decide a waiting result: ``(state, by, at, outcome, plan_id, version)``."""
_INSERT_EVENT = (
    "INSERT INTO execution_events (plan_id, seq, at, step, kind, tool, action, paths, reason, "
    "decision) SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ? "
    "FROM execution_events WHERE plan_id = ?"
)


class ExecutionStore:
    """Reads and writes ``executions`` and ``execution_events``; returns pydantic models."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    async def begin(self, record: ExecutionRecord) -> None:
        """Record a new execution (its branch has just been started)."""
        await self.db.write(lambda conn: insert_execution(conn, record))

    async def get(self, plan_id: str) -> ExecutionRecord | None:
        row = await self.db.fetchone("SELECT * FROM executions WHERE plan_id = ?", (plan_id,))
        return _record(row) if row is not None else None

    async def running(self, agent: str) -> ExecutionRecord | None:
        """The agent's execution that has not ended, if any."""
        row = await self.db.fetchone(
            "SELECT * FROM executions WHERE agent = ? AND ended_at IS NULL "
            "ORDER BY started_at DESC LIMIT 1",
            (agent,),
        )
        return _record(row) if row is not None else None

    async def running_all(self) -> list[ExecutionRecord]:
        """Every execution that has not ended, of every agent, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM executions WHERE ended_at IS NULL ORDER BY started_at"
        )
        return [_record(row) for row in rows]

    async def unopened(self) -> list[str]:
        """The plan ids of the executions that are each agent's newest, ended, and whose
        result never opened (older ones predate results)."""
        rows = await self.db.fetchall(
            "SELECT plan_id FROM executions AS e WHERE ended_at IS NOT NULL AND result IS NULL "
            "AND started_at = (SELECT MAX(started_at) FROM executions WHERE agent = e.agent) "
            "ORDER BY started_at"
        )
        return [str(row["plan_id"]) for row in rows]

    async def latest(self, agent: str) -> ExecutionRecord | None:
        """The agent's newest execution, running or ended."""
        row = await self.db.fetchone(
            "SELECT * FROM executions WHERE agent = ? ORDER BY started_at DESC LIMIT 1", (agent,)
        )
        return _record(row) if row is not None else None

    async def save_steps(
        self,
        plan_id: str,
        current_step: StepIndex,
        steps: Sequence[StepOutcome],
        *,
        revision: int | None = None,
    ) -> None:
        """The host's current step and the steps' outcomes (and, after an amendment, the
        revision now executing)."""
        if revision is None:
            await self.db.execute(
                "UPDATE executions SET current_step = ?, steps = ? WHERE plan_id = ?",
                (current_step, _steps_text(steps), plan_id),
            )
        else:
            await self.db.execute(
                "UPDATE executions SET current_step = ?, steps = ?, revision = ? WHERE plan_id = ?",
                (current_step, _steps_text(steps), revision, plan_id),
            )

    async def set_waiting_checkpoint(self, plan_id: str, step: StepIndex | None) -> None:
        """Mark (at ``step``) or clear the 🔴 checkpoint waiting for an answer."""
        await self.db.execute(
            "UPDATE executions SET waiting_checkpoint = ? WHERE plan_id = ?", (step, plan_id)
        )

    async def end(
        self, plan_id: str, at: datetime, reason: str, steps: Sequence[StepOutcome]
    ) -> bool:
        """End a running execution with the steps' final outcomes; False when it had
        already ended."""
        values = (ts(at), reason[:1000], _steps_text(steps), plan_id)
        return await self._changing(
            ChangeKind.EXECUTION,
            plan_id,
            {"what": "ended"},
            at,
            "UPDATE executions SET ended_at = ?, end_reason = ?, steps = ?, "
            "waiting_checkpoint = NULL WHERE plan_id = ? AND ended_at IS NULL",
            values,
        )

    async def _changing(
        self,
        kind: ChangeKind,
        plan_id: str,
        payload: dict[str, Any],
        at: datetime,
        sql: str,
        values: tuple[Any, ...],
    ) -> bool:
        """``sql`` on ``plan_id``'s row and, when it changed it, the change appended to the
        feed in the same transaction; whether it changed the row."""
        origin = self.db.origin

        def work(conn: Tx) -> bool:
            if conn.execute(sql, values).rowcount != 1:
                return False
            row = conn.execute("SELECT agent FROM executions WHERE plan_id = ?", (plan_id,))
            agent = str(row.fetchone()[0])
            append_change(conn, origin, kind, agent, plan_id, payload, at)
            return True

        return await self.db.write(work)

    # -- the result (storage.result_votes keeps the Merge votes) ---------------------------

    async def open_result(
        self,
        plan_id: str,
        requested_by: str | None,
        requested_by_name: str | None,
        commit: str | None,
    ) -> bool:
        """An ended execution's result starts waiting for a decision, pinned to ``commit``
        (the commit its card shows); False when it had already been opened (or the
        execution has not ended)."""
        return await self._changing(
            ChangeKind.RESULT,
            plan_id,
            {"what": "opened"},
            datetime.now(UTC),
            "UPDATE executions SET result = 'waiting', result_version = result_version + 1, "
            "requested_by = ?, requested_by_name = ?, result_commit = ? "
            "WHERE plan_id = ? AND ended_at IS NOT NULL AND result IS NULL",
            (requested_by, requested_by_name, commit, plan_id),
        )

    async def result_moved(self, plan_id: str, version: int, commit: str) -> bool:
        """The waiting result changed (rolled back, or pinned anew): it is pinned to
        ``commit`` and its version moves on, so older cards' clicks and votes stop
        counting. False when it no longer waits at ``version``."""
        changed = await self.db.execute(RESULT_MOVED, (commit, plan_id, version))
        return changed == 1

    async def decide_result(
        self,
        plan_id: str,
        version: int,
        state: ResultState,
        by: str,
        at: datetime,
        outcome: str,
    ) -> bool:
        """Record Merge or Discard; False when the result no longer waits at ``version``."""
        changed = await self.db.execute(
            DECIDE_RESULT, (state.value, by, ts(at), outcome[:1000], plan_id, version)
        )
        return changed == 1

    async def set_card(self, plan_id: str, channel_id: int, message_id: int) -> None:
        """Where the result's completion card is now."""
        await self.db.execute(
            "UPDATE executions SET card_channel = ?, card_message = ? WHERE plan_id = ?",
            (str(channel_id), str(message_id), plan_id),
        )

    async def claim_card(self, plan_id: str, channel_id: int) -> None:
        """A card of the result is about to be posted in ``channel_id``: its slot is
        claimed (the message not known yet, read back as no card), so a database that
        would not record the card refuses before anything is posted."""
        await self.db.execute(
            "UPDATE executions SET card_channel = ?, card_message = '0' WHERE plan_id = ?",
            (str(channel_id), plan_id),
        )

    async def by_card(self, channel_id: int, message_id: int) -> ExecutionRecord | None:
        row = await self.db.fetchone(
            "SELECT * FROM executions WHERE card_channel = ? AND card_message = ?",
            (str(channel_id), str(message_id)),
        )
        return _record(row) if row is not None else None

    async def waiting_result(self, agent: str) -> ExecutionRecord | None:
        """The agent's result waiting for Merge or Discard, if any."""
        row = await self.db.fetchone(
            "SELECT * FROM executions WHERE agent = ? AND result = 'waiting' "
            "ORDER BY started_at DESC LIMIT 1",
            (agent,),
        )
        return _record(row) if row is not None else None

    async def waiting_results(self) -> list[ExecutionRecord]:
        """Every result waiting for a decision, oldest first (restored after a restart)."""
        rows = await self.db.fetchall(
            "SELECT * FROM executions WHERE result = 'waiting' ORDER BY started_at"
        )
        return [_record(row) for row in rows]

    async def add_event(self, event: ExecutionEvent) -> None:
        """Append a command, drift or checkpoint event; its ``seq`` is the next in the
        execution."""
        await self.db.execute(
            _INSERT_EVENT,
            (
                event.plan_id,
                ts(event.at),
                event.step,
                event.kind.value,
                event.tool,
                event.action[:2000],
                json.dumps(list(event.paths[:200])),
                event.reason[:2000] if event.reason else None,
                _decision_text(event),
                event.plan_id,
            ),
        )

    async def events(
        self, plan_id: str, kind: ExecutionEventKind | None = None
    ) -> list[ExecutionEvent]:
        """The execution's events in order (only ``kind``'s when given)."""
        if kind is None:
            rows = await self.db.fetchall(
                "SELECT * FROM execution_events WHERE plan_id = ? ORDER BY seq", (plan_id,)
            )
        else:
            rows = await self.db.fetchall(
                "SELECT * FROM execution_events WHERE plan_id = ? AND kind = ? ORDER BY seq",
                (plan_id, kind.value),
            )
        return [_event(row) for row in rows]


def insert_execution(conn: Tx, record: ExecutionRecord) -> None:
    """Write a new execution's row in the caller's transaction (an approval's: the
    execution is recorded with the approval that started it)."""
    conn.execute(
        _INSERT,
        (
            record.plan_id,
            record.agent,
            record.revision,
            record.branch,
            record.base,
            record.base_commit,
            record.reviewed_commit,
            record.reviewed_index,
            record.current_step,
            _steps_text(record.steps),
            record.waiting_checkpoint,
            ts(record.started_at),
            ts(record.ended_at),
            record.end_reason,
        ),
    )


def _steps_text(steps: Sequence[StepOutcome]) -> str:
    return json.dumps([step.value for step in steps])


def _record(row: Any) -> ExecutionRecord:
    return ExecutionRecord(
        agent=row["agent"],
        plan_id=row["plan_id"],
        revision=int(row["revision"]),
        branch=row["branch"],
        base=row["base"],
        base_commit=row["base_commit"],
        reviewed_commit=row["reviewed_commit"],
        reviewed_index=row["reviewed_index"],
        current_step=StepIndex(int(row["current_step"])),
        steps=tuple(StepOutcome(s) for s in json.loads(row["steps"])),
        waiting_checkpoint=(
            StepIndex(int(row["waiting_checkpoint"]))
            if row["waiting_checkpoint"] is not None
            else None
        ),
        started_at=parse_required_ts(row["started_at"], "executions"),
        ended_at=parse_ts(row["ended_at"]),
        end_reason=row["end_reason"],
        result=ResultState(row["result"]) if row["result"] else None,
        result_version=int(row["result_version"]),
        requested_by=row["requested_by"],
        requested_by_name=row["requested_by_name"],
        decided_by_name=row["decided_by_name"],
        decided_at=parse_ts(row["decided_at"]),
        outcome=row["outcome"],
        card_channel=int(row["card_channel"]) if row["card_channel"] else None,
        card_message=int(row["card_message"]) or None if row["card_message"] else None,
        result_commit=row["result_commit"],
        step_message=row["step_message"],
    )


def _event(row: Any) -> ExecutionEvent:
    kind = ExecutionEventKind(row["kind"])
    decided = row["decision"] or None
    answered = kind is ExecutionEventKind.CHECKPOINT
    return ExecutionEvent(
        plan_id=row["plan_id"],
        seq=int(row["seq"]),
        at=parse_required_ts(row["at"], "execution_events"),
        step=StepNumber(int(row["step"])),
        kind=kind,
        tool=row["tool"],
        action=row["action"],
        paths=tuple(json.loads(row["paths"])),
        reason=row["reason"],
        decision=DriftDecision(decided) if decided and not answered else None,
        answer=_TEXT_ANSWER[decided] if decided and answered else None,
    )


_ANSWER_TEXT = {
    Answer.ALLOWED: "allowed",
    Answer.DENIED: "denied",
    Answer.TIMED_OUT: "timed-out",
    Answer.NOT_SHOWN: "stopped",
}
"""A checkpoint's answer as the ``decision`` column holds it: the texts its rows have held
since checkpoints were first recorded (a card never shown is ``stopped``, which the column's
check allows; ``not-shown`` it does not)."""
_TEXT_ANSWER = {text: answer for answer, text in _ANSWER_TEXT.items()}


def _decision_text(event: ExecutionEvent) -> str | None:
    """The ``decision`` column of ``event``: its checkpoint answer or its drift decision."""
    if event.answer is not None:
        return _ANSWER_TEXT[event.answer]
    return event.decision.value if event.decision is not None else None
