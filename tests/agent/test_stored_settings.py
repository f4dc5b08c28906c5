"""The plan-mode settings an agent runs under, resolved from the config and its stored row:
kept between requests, and never kept past a change of what they are made of."""

from __future__ import annotations

from pathlib import Path

from plancord.agent.manager import AgentManager, StoredSettings
from plancord.config import Config, PlanModeOverrides
from plancord.core.agents import AgentRecord
from plancord.core.planning import Actor
from plancord.core.roles import RoleNames
from plancord.core.settings import PlanModeSettings
from plancord.storage.db import Database
from plancord.storage.store import SqlStore
from tests.conftest import ManualClock

ANA = Actor.user(42, "ana")
CONFIG = Config.model_validate(
    {
        "data_dir": "/nonexistent",
        "plan_mode": {"approver_roles": ["Reviewers"]},
        "agents": {"ada": {"plan_mode": {"approvals": 2}}},
        "channels": {2002: {"plan_mode": {"tool_visibility": "filter"}}},
    }
)


def resolved_afresh(record: AgentRecord, roles: RoleNames) -> PlanModeSettings:
    """What ``plan_mode_for`` must equal: the layers merged from scratch."""
    overrides = PlanModeOverrides.model_validate(record.plan_mode_overrides)
    return roles.apply(CONFIG.plan_mode_for("ada", record.channel_id, overrides))


async def test_settings_follow_the_stored_row_and_the_role_ids(tmp_path: Path) -> None:
    async with await Database.open(tmp_path / "p.db") as db:
        store = SqlStore(db)
        settings = StoredSettings(CONFIG, store)
        manager = AgentManager(store, tmp_path / "agents", "claude-fake", ManualClock())
        await manager.create(
            "ada", actor=ANA, channel_id=1001, plan_mode_overrides={"max_plan_bytes": 4096}
        )

        first = await settings.plan_mode_for("ada")
        record = await store.get_agent("ada")
        assert first == resolved_afresh(record, RoleNames({}))
        assert (first.approvals, first.max_plan_bytes, first.approver_roles) == (2, 4096, ())
        assert await settings.plan_mode_for("ada") is first, "resolved again for the same row"

        moved = record.model_copy(
            update={"channel_id": 2002, "plan_mode_overrides": {"max_plan_bytes": 2048}}
        )
        await store.update_agent(moved)
        second = await settings.plan_mode_for("ada")
        assert second == resolved_afresh(moved, RoleNames({}))
        assert (second.max_plan_bytes, second.tool_visibility.value) == (2048, "filter")

        roles = RoleNames({"Reviewers": "555"})
        settings.resolve_roles(roles)
        third = await settings.plan_mode_for("ada")
        assert third.approver_roles == ("555",)
        assert third == resolved_afresh(moved, roles)
