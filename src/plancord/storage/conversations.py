"""Persisted conversations and model usage, so an agent resumes where it was after a restart.

A conversation is the list of Messages API messages (``{"role", "content": [blocks]}``) with
plancord's regime reminder left out: the reminder is added to the newest user turn when a
request is built, so stored history stays byte-stable and prompt-cacheable.
"""

from __future__ import annotations

import json
from typing import Any

from plancord.core.ports import ModelUsage
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import ts

Message = dict[str, Any]

_INSERT_MESSAGE = (
    "INSERT INTO messages (agent, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)"
)


class ConversationStore:
    def __init__(self, db: Backend) -> None:
        self.db = db

    async def load(self, agent: str) -> list[Message]:
        rows = await self.db.fetchall(
            "SELECT role, content FROM messages WHERE agent = ? ORDER BY seq", (agent,)
        )
        return [{"role": r["role"], "content": json.loads(r["content"])} for r in rows]

    async def load_since(self, agent: str, since: Any) -> list[Message]:
        """The agent's messages written at or after ``since``, in order (what it did since
        planning was entered, for the plan's reviewer)."""
        rows = await self.db.fetchall(
            "SELECT role, content FROM messages WHERE agent = ? AND created_at >= ? ORDER BY seq",
            (agent, ts(since)),
        )
        return [{"role": r["role"], "content": json.loads(r["content"])} for r in rows]

    async def append(self, agent: str, message: Message, at: Any) -> None:
        await self.db.execute(
            "INSERT INTO messages (agent, seq, role, content, created_at) "
            "SELECT ?, coalesce(max(seq) + 1, 0), ?, ?, ? FROM messages WHERE agent = ?",
            (agent, message["role"], _dump(message["content"]), ts(at), agent),
        )

    async def replace_last(self, agent: str, message: Message) -> None:
        await self.db.execute(
            "UPDATE messages SET role = ?, content = ? WHERE agent = ? AND seq = "
            "(SELECT max(seq) FROM messages WHERE agent = ?)",
            (message["role"], _dump(message["content"]), agent, agent),
        )

    async def replace_all(self, agent: str, messages: list[Message], at: Any) -> None:
        rows = [
            (agent, seq, m["role"], _dump(m["content"]), ts(at)) for seq, m in enumerate(messages)
        ]

        def replace(conn: Tx) -> None:
            conn.execute("DELETE FROM messages WHERE agent = ?", (agent,))
            conn.executemany(_INSERT_MESSAGE, rows)

        await self.db.write(replace)

    async def record_usage(
        self, agent: str, model: str, usage: ModelUsage, stop_reason: str | None, at: Any
    ) -> None:
        await self.db.execute(
            "INSERT INTO model_usage (agent, at, model, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens, stop_reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                agent,
                ts(at),
                model,
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_input_tokens,
                usage.cache_creation_input_tokens,
                stop_reason,
            ),
        )

    async def usage_between(self, agent: str, start: Any, end: Any) -> list[tuple[str, ModelUsage]]:
        """``(model, usage)`` of the agent's calls from ``start`` to ``end``, oldest first."""
        rows = await self.db.fetchall(
            "SELECT model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens "
            "FROM model_usage WHERE agent = ? AND at >= ? AND at <= ? ORDER BY id",
            (agent, ts(start), ts(end)),
        )
        return [(r[0], ModelUsage(r[1], r[2], r[3], r[4])) for r in rows]

    async def usage(self, agent: str) -> list[ModelUsage]:
        rows = await self.db.fetchall(
            "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens "
            "FROM model_usage WHERE agent = ? ORDER BY id",
            (agent,),
        )
        return [ModelUsage(r[0], r[1], r[2], r[3]) for r in rows]


def _dump(content: Any) -> str:
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))
