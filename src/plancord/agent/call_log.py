"""The decision records of tool calls, written without slowing a call.

Why this exists: a record per call is a database write per call, and a call must not wait
for it. ``CallLog.note`` only appends to a list and, when no write is under way, starts one
in the background; records noted while a write runs go in the next, so a busy agent's
records land many to a transaction. Whoever reads the records (``/plan why``, the
completion card) flushes first, and ``close`` writes what is left. A write that fails is
logged and its records dropped: a record explains a call, it never decides one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from plancord.core.call_records import CallOutcome, CallRecord, RecordBounds, clip_reason
from plancord.core.decider import Decider
from plancord.core.gate import GateDecision
from plancord.core.ports import Clock
from plancord.core.shell.readonly import Verdict
from plancord.storage.call_records import CallRecordStore

log = logging.getLogger(__name__)

MAX_PENDING = 10_000
"""Records kept in memory when the database falls behind; older ones are dropped."""


class CallLog:
    def __init__(self, store: CallRecordStore, clock: Clock, bounds: RecordBounds) -> None:
        self.store = store
        self._clock = clock
        self._bounds = bounds
        self._pending: list[CallRecord] = []
        self._writing: asyncio.Task[None] | None = None
        self._last_seq = 0

    def next_seq(self) -> tuple[str, int]:
        """A new record's id and its place in order (increasing within this process)."""
        self._last_seq = max(time.time_ns(), self._last_seq + 1)
        return secrets.token_hex(8), self._last_seq

    def note(self, record: CallRecord) -> None:
        """Keep ``record``; the write happens in the background."""
        self._pending.append(record)
        if len(self._pending) > MAX_PENDING:
            del self._pending[: len(self._pending) - MAX_PENDING]
        if self._writing is None or self._writing.done():
            self._writing = asyncio.get_running_loop().create_task(self._write())

    async def flush(self) -> None:
        """Every record noted so far is in the store (or was dropped with a logged error)."""
        while self._pending or (self._writing is not None and not self._writing.done()):
            if self._writing is None or self._writing.done():
                await self._write()
            else:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._writing)

    async def close(self) -> None:
        await self.flush()

    async def _write(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            older_than = self._clock.now() - timedelta(days=self._bounds.retention_days)
            try:
                await self.store.add_many(batch, self._bounds.keep_per_plan, older_than)
            except Exception:
                log.exception("could not keep %d decision records", len(batch))


@dataclass(slots=True)
class CallTrace:
    """What is known of one call as the dispatch decides it, made into its record at the
    end. ``outcome`` is set when the call did not run; None: it ran (or failed running)."""

    agent: str
    tool: str
    digest: str
    phase: str = "unknown"
    plan_id: str | None = None
    revision: int | None = None
    step: int | None = None
    decider: Decider = Decider.GATE
    reason: str = "not decided"
    rule_id: str | None = None
    actor: str | None = None
    outcome: CallOutcome | None = None

    def decided(
        self,
        decider: Decider,
        reason: str,
        *,
        rule_id: str | None = None,
        outcome: CallOutcome | None = None,
    ) -> None:
        self.decider, self.reason, self.rule_id, self.outcome = decider, reason, rule_id, outcome

    def record(self, log: CallLog, ran_with_error: bool, at: datetime) -> CallRecord:
        outcome = self.outcome or (CallOutcome.FAILED if ran_with_error else CallOutcome.RAN)
        record_id, seq = log.next_seq()
        return CallRecord(
            id=record_id,
            seq=seq,
            agent=self.agent,
            phase=self.phase,
            tool=self.tool,
            digest=self.digest,
            decider=self.decider,
            reason=clip_reason(self.reason),
            outcome=outcome,
            at=at,
            plan_id=self.plan_id,
            revision=self.revision,
            step=self.step,
            rule_id=self.rule_id,
            actor=self.actor,
        )


def gate_reason(decision: GateDecision, verdict: Verdict | None) -> str:
    """The gate's reason, with the filter's deciding rule when the filter decided."""
    if decision.decider is Decider.FILTER and verdict is not None and verdict.decided_by:
        return f"{decision.reason} [{verdict.decided_by[0]}]"
    return decision.reason
