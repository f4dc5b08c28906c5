"""Which guilds, and so which agents, a process serving a share of the shards runs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plancord.config.shards import ShardShare
from plancord.core.agents import AgentRecord

# Discord: shard_id = (guild_id >> 22) % shard_count.
GUILD_ON_0 = 4 << 22
GUILD_ON_1 = 5 << 22
GUILD_ON_3 = (7 << 22) + 12345


def agent(guild_id: int | None) -> AgentRecord:
    return AgentRecord(
        name="ada", model="m", guild_id=guild_id, created_at=datetime(2026, 1, 5, tzinfo=UTC)
    )


def test_discords_formula_places_each_guild() -> None:
    share = ShardShare(4, frozenset({0, 1}))
    assert share.shard_of(GUILD_ON_0) == 0
    assert share.shard_of(GUILD_ON_1) == 1
    assert share.shard_of(GUILD_ON_3) == 3
    assert share.owns(agent(GUILD_ON_1))
    assert not share.owns(agent(GUILD_ON_3))


def test_an_agent_outside_any_guild_belongs_to_shard_zero() -> None:
    assert ShardShare(2, frozenset({0})).owns(agent(None))
    assert not ShardShare(2, frozenset({1})).owns(agent(None))


def test_one_process_serving_every_shard_owns_everything() -> None:
    assert ShardShare().owns(agent(GUILD_ON_3))
    assert ShardShare(2, frozenset({0, 1})).owns(agent(GUILD_ON_3))


@pytest.mark.parametrize(("count", "ids"), [(0, {0}), (2, set()), (2, {2}), (3, {-1})])
def test_a_share_outside_the_application_is_refused(count: int, ids: set[int]) -> None:
    with pytest.raises(ValueError, match="shard"):
        ShardShare(count, frozenset(ids))
