from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from plancord.core.agents import AgentRecord
from plancord.core.errors import AgentNotFound
from plancord.core.planning import Actor, AuditEntry, EntrySource, Phase
from plancord.storage.store import AgentExists, SqlStore, ts
from tests.conftest import agent_record


async def test_agents_round_trip(store: SqlStore) -> None:
    record = agent_record().model_copy(
        update={
            "system_prompt": "be careful",
            "permission_profile": {"preset": "locked"},
            "plan_mode_overrides": {"approval_timeout": 600},
            "role": "coordinator",
        }
    )
    await store.create_agent(record)
    assert await store.get_agent("ada") == record
    assert await store.find_agent_by_channel(1001) == record
    assert await store.find_agent_by_channel(5) is None
    assert [a.name for a in await store.list_agents()] == ["ada"]
    state = await store.load_state("ada")
    assert state.phase is Phase.INACTIVE
    assert state.version == 0


async def test_duplicate_names_and_channels_are_refused(store: SqlStore) -> None:
    await store.create_agent(agent_record())
    with pytest.raises(AgentExists, match="already exists"):
        await store.create_agent(agent_record(channel_id=2))
    with pytest.raises(AgentExists, match="already bound to another agent"):
        await store.create_agent(agent_record("bob", channel_id=1001))


async def test_unknown_agents(store: SqlStore) -> None:
    with pytest.raises(AgentNotFound, match="no agent named 'ghost'"):
        await store.get_agent("ghost")
    with pytest.raises(AgentNotFound):
        await store.load_state("ghost")
    with pytest.raises(AgentNotFound):
        await store.delete_agent("ghost")


async def test_removing_an_agent_keeps_its_audit(store: SqlStore) -> None:
    await store.create_agent(agent_record())
    at = datetime(2026, 1, 1, tzinfo=UTC)
    await store.append_audit(AuditEntry(at=at, agent="ada", actor="operator", action="note"))
    await store.delete_agent(
        "ada", AuditEntry(at=at, agent="ada", actor="operator", action="agent-removed")
    )
    with pytest.raises(AgentNotFound):
        await store.load_state("ada")
    assert [a.action for a in await store.list_audit("ada")] == ["note", "agent-removed"]


async def test_update_agent(store: SqlStore) -> None:
    record = await store.create_agent(agent_record())
    changed = record.model_copy(update={"model": "claude-other", "system_prompt": "new"})
    await store.update_agent(changed)
    assert await store.get_agent("ada") == changed


def test_agent_names_are_validated() -> None:
    for bad in ("", "has space", "x" * 33, "semi;colon", "ünï"):
        with pytest.raises(ValueError, match="not a valid agent name"):
            AgentRecord(name=bad, model="m", created_at=datetime.now(UTC))


def test_timestamps_sort_as_text() -> None:
    early = datetime(2026, 1, 1, 9, 0, 0, 5, tzinfo=UTC)
    late = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    assert ts(early) < ts(late)  # type: ignore[operator]
    with pytest.raises(ValueError, match="timezone-aware"):
        ts(datetime(2026, 1, 1))


async def test_the_channel_lookup_follows_moves_and_removals(store: SqlStore) -> None:
    record = await store.create_agent(agent_record())
    assert await store.find_agent_by_channel(1001) == record
    moved = record.model_copy(update={"channel_id": 2002})
    await store.update_agent(moved)
    assert await store.find_agent_by_channel(1001) is None
    assert await store.find_agent_by_channel(2002) == moved
    await store.delete_agent("ada")
    assert await store.find_agent_by_channel(2002) is None


async def test_the_channel_lookup_finds_agents_created_by_another_store(
    store: SqlStore,
) -> None:
    other = SqlStore(store.db)
    record = await other.create_agent(agent_record())
    assert await store.find_agent_by_channel(1001) == record
    assert await store.get_agent("ada") == record


async def test_revisions_are_served_from_memory_and_equal_what_is_stored(
    store: SqlStore, service: Any, agent: str
) -> None:
    await service.enter(agent, source=EntrySource.USER, actor=Actor.user(42, "ana"), task="t")
    submitted = await service.submit(
        agent, {"summary": "Do it", "steps": [{"description": "one step"}]}
    )
    key = (submitted.plan_id, submitted.revision)
    assert await store.get_revision(*key) is submitted  # no read, no parse
    fresh = SqlStore(store.db)
    assert await fresh.get_revision(*key) == submitted
    assert await fresh.get_revision(*key) is await fresh.get_revision(*key)
    assert await store.get_revision(submitted.plan_id, 99) is None


async def test_the_revision_cache_keeps_only_the_newest(
    store: SqlStore, service: Any, agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SqlStore, "REVISION_CACHE", 2)
    await service.enter(agent, source=EntrySource.USER, actor=Actor.user(42, "ana"), task="t")
    plan_id = (await store.load_state(agent)).plan_id
    for n in range(3):
        await store.db.write(
            lambda conn, n=n: conn.execute(
                "INSERT INTO plan_revisions (plan_id, revision, agent, plan_json, markdown, "
                "sha256, submitted_at, author) SELECT ?, ?, ?, ?, 'm', ?, ?, 'agent'",
                (
                    plan_id,
                    n + 10,
                    agent,
                    '{"summary": "x", "steps": [{"description": "y"}]}',
                    "0" * 64,
                    ts(datetime(2026, 1, 1, tzinfo=UTC)),
                ),
            )
        )
        assert await store.get_revision(plan_id, n + 10) is not None  # type: ignore[arg-type]
    assert list(store._revisions) == [(plan_id, 11), (plan_id, 12)]
