"""The store's one codec between SQLite rows and the core's models: timestamps as UTC text,
and each table's row ↔ model conversion (planning state, revisions, audit entries, agents),
so no query maps columns by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from plancord.core.agents import AgentRecord
from plancord.core.errors import StorageError
from plancord.core.intents import IntentState
from plancord.core.plan import Plan
from plancord.core.planning import (
    AuditEntry,
    PlanningState,
    PlanRevision,
    RevisionAuthor,
    StepProgress,
)


def ts(value: datetime | None) -> str | None:
    """Timestamps as fixed-width ISO text in UTC, so SQL compares them correctly as text."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def parse_ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def parse_required_ts(value: str | None, table: str) -> datetime:
    """A timestamp the schema of ``table`` declares NOT NULL; a row without one is corrupt."""
    parsed = parse_ts(value)
    if parsed is None:
        raise StorageError(f"a row of {table} has no timestamp", "corrupt")
    return parsed


def intent_fields(row: Any, table: str) -> dict[str, Any]:
    """The columns every kind of intent's row has (``core.intents``), as model fields."""
    return {
        "id": row["id"],
        "agent": row["agent"],
        "plan_id": row["plan_id"],
        "actor": row["actor"],
        "actor_name": row["actor_name"],
        "detail": json.loads(row["detail"]),
        "owner": row["owner"],
        "state": IntentState(row["state"]),
        "opened_at": parse_required_ts(row["opened_at"], table),
        "closed_at": parse_ts(row["closed_at"]),
        "outcome": row["outcome"],
    }


STATE_COLUMNS = (
    "phase",
    "task",
    "requested_by",
    "requested_by_name",
    "entered_at",
    "entry_source",
    "entry_reason",
    "plan_id",
    "revision",
    "plan_sha",
    "approval_deadline",
    "idle_deadline",
    "approved_by",
    "approved_by_name",
    "approved_at",
    "approval_mode",
    "steps",
    "amends",
    "version",
    "updated_at",
)


def state_values(state: PlanningState) -> list[Any]:
    return [
        state.phase.value,
        state.task,
        state.requested_by,
        state.requested_by_name,
        ts(state.entered_at),
        state.entry_source.value if state.entry_source else None,
        state.entry_reason,
        state.plan_id,
        state.revision,
        state.plan_sha,
        ts(state.approval_deadline),
        ts(state.idle_deadline),
        state.approved_by,
        state.approved_by_name,
        ts(state.approved_at),
        state.approval_mode.value if state.approval_mode else None,
        json.dumps([s.model_dump(mode="json") for s in state.steps]),
        state.amends,
        state.version,
        ts(state.updated_at),
    ]


def state_from_row(row: Any) -> PlanningState:
    return PlanningState(
        agent=row["agent"],
        phase=row["phase"],
        task=row["task"],
        requested_by=row["requested_by"],
        requested_by_name=row["requested_by_name"],
        entered_at=parse_ts(row["entered_at"]),
        entry_source=row["entry_source"],
        entry_reason=row["entry_reason"],
        plan_id=row["plan_id"],
        revision=row["revision"],
        plan_sha=row["plan_sha"],
        approval_deadline=parse_ts(row["approval_deadline"]),
        idle_deadline=parse_ts(row["idle_deadline"]),
        approved_by=row["approved_by"],
        approved_by_name=row["approved_by_name"],
        approved_at=parse_ts(row["approved_at"]),
        approval_mode=row["approval_mode"],
        steps=tuple(StepProgress.model_validate(s) for s in json.loads(row["steps"])),
        amends=row["amends"],
        version=row["version"],
        updated_at=parse_ts(row["updated_at"]),
    )


def revision_from_row(row: Any) -> PlanRevision:
    return PlanRevision(
        agent=row["agent"],
        plan_id=row["plan_id"],
        revision=row["revision"],
        plan=Plan.model_validate_json(row["plan_json"]),
        markdown=row["markdown"],
        sha256=row["sha256"],
        submitted_at=datetime.fromisoformat(row["submitted_at"]),
        author=RevisionAuthor(row["author"]),
        tree=row["tree"],
        edited_by=row["edited_by"],
        edited_by_name=row["edited_by_name"],
    )


def audit_from_row(row: Any) -> AuditEntry:
    return AuditEntry(
        id=row["id"],
        at=datetime.fromisoformat(row["at"]),
        agent=row["agent"],
        actor=row["actor"],
        action=row["action"],
        plan_id=row["plan_id"],
        revision=row["revision"],
        detail=json.loads(row["detail"]),
    )


def agent_from_row(row: Any) -> AgentRecord:
    return AgentRecord(
        name=row["name"],
        model=row["model"],
        channel_id=row["channel_id"],
        guild_id=row["guild_id"],
        system_prompt=row["system_prompt"],
        permission_profile=json.loads(row["permission_profile"]),
        plan_mode_overrides=json.loads(row["plan_mode_overrides"]),
        role=row["role"],
        created_at=datetime.fromisoformat(row["created_at"]),
        created_by=row["created_by"],
    )


UPDATE_STATE = (
    f"UPDATE planning_state SET {', '.join(f'{c} = ?' for c in STATE_COLUMNS)} "  # noqa: S608
    "WHERE agent = ? AND version = ?"
)

INSERT_AUDIT = (
    "INSERT INTO audit_log (at, agent, actor, action, plan_id, revision, detail) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def audit_values(entry: AuditEntry) -> tuple[Any, ...]:
    return (
        ts(entry.at),
        entry.agent,
        entry.actor,
        entry.action,
        entry.plan_id,
        entry.revision,
        json.dumps(entry.detail, ensure_ascii=False, default=str),
    )
