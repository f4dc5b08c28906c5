"""Where every decided drift is written: its one audit row and the step's event.

Why this exists: drift is decided once (``core.drift_findings``), whether the host found it
before a call, after it, or at a connection the proxy holds; this writes what was decided
the same way for all of them, so the audit log and the completion card read alike and a
new kind of finding needs no writer of its own.
"""

from __future__ import annotations

from plancord.core.drift_findings import DriftAction, DriftFinding, DriftPlace, drift_row
from plancord.core.execution import (
    DriftDecision,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    step_number,
)
from plancord.core.ports import AuditLog, Clock
from plancord.storage.executions import ExecutionStore


class DriftRecords:
    """The writer of decided drift: the audit row (``drift_row``) and the execution's event."""

    def __init__(self, executions: ExecutionStore, audit: AuditLog, clock: Clock) -> None:
        self._executions = executions
        self._audit = audit
        self._clock = clock

    async def record(
        self,
        record: ExecutionRecord,
        tool: str,
        call: str,
        finding: DriftFinding,
        action: DriftAction,
        decision: DriftDecision,
    ) -> None:
        """A drift of ``record``'s current step decided: ``call`` as the permission card
        shows it, under ``tool`` in the step's events."""
        step = step_number(record.current_step)
        place = DriftPlace(record.agent, record.plan_id, record.revision, step, call)
        now = self._clock.now()
        await self._audit.append_audit(drift_row(finding, action, decision, place, now))
        await self._executions.add_event(
            ExecutionEvent(
                plan_id=record.plan_id,
                at=now,
                step=step,
                kind=ExecutionEventKind.DRIFT,
                tool=tool,
                action=call,
                paths=finding.paths,
                reason=finding.reason,
                decision=decision,
            )
        )
