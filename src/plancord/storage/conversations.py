"""Persisted conversations and model usage, so an agent resumes where it was after a restart.

A conversation is the list of Messages API messages (``{"role", "content": [blocks]}``),
exactly as they were sent, and its *prefix*: the ``system`` and ``tools`` it was started
with, frozen so that every request of the conversation (after a restart too) sends the same
copy, as models with preserved thinking require. Messages are only ever appended, except the
unanswered tail (``replace_tail``) and a conversation started anew (``restart``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from plancord.core.ports import ModelUsage
from plancord.storage.backend import Backend, Tx
from plancord.storage.codec import ts

Message = dict[str, Any]

_INSERT_MESSAGE = (
    "INSERT INTO messages (agent, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class ConversationPrefix:
    """What comes before the messages of a conversation, sent identical on every request."""

    system: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    drop_block: bool = False
    """A request was refused for a thinking block bound to another prefix: later requests ask
    the API to drop such blocks instead of refusing (remembered across restarts)."""


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

    async def replace_tail(self, agent: str, start: int, messages: list[Message], at: Any) -> None:
        """Replace the messages from index ``start`` on by ``messages`` (the unanswered tail of
        a conversation: nothing after it was produced from it, so nothing is bound to it)."""
        rows = [
            (agent, start + i, m["role"], _dump(m["content"]), ts(at))
            for i, m in enumerate(messages)
        ]

        def replace(conn: Tx) -> None:
            conn.execute("DELETE FROM messages WHERE agent = ? AND seq >= ?", (agent, start))
            conn.executemany(_INSERT_MESSAGE, rows)

        await self.db.write(replace)

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

    async def restart(self, agent: str, messages: list[Message], at: Any) -> None:
        """Start the conversation anew with ``messages`` (a summary, a fresh context): its
        frozen prefix is forgotten with the old messages, so the next request freezes one."""
        rows = [
            (agent, seq, m["role"], _dump(m["content"]), ts(at)) for seq, m in enumerate(messages)
        ]

        def restart(conn: Tx) -> None:
            conn.execute("DELETE FROM messages WHERE agent = ?", (agent,))
            conn.execute("DELETE FROM conversation_prefixes WHERE agent = ?", (agent,))
            conn.executemany(_INSERT_MESSAGE, rows)

        await self.db.write(restart)

    async def prefix(self, agent: str) -> ConversationPrefix | None:
        row = await self.db.fetchone(
            "SELECT system, tools, drop_block FROM conversation_prefixes WHERE agent = ?",
            (agent,),
        )
        if row is None:
            return None
        return ConversationPrefix(
            json.loads(row["system"]), json.loads(row["tools"]), bool(row["drop_block"])
        )

    async def freeze_prefix(
        self, agent: str, system: list[dict[str, Any]], tools: list[dict[str, Any]], at: Any
    ) -> ConversationPrefix:
        """Keep ``system`` and ``tools`` as the conversation's prefix, unless one is kept
        already (another process froze it first): the kept one is returned."""
        await self.db.execute(
            "INSERT INTO conversation_prefixes (agent, system, tools, drop_block, created_at) "
            "VALUES (?, ?, ?, 0, ?) ON CONFLICT (agent) DO NOTHING",
            (agent, _dump(system), _dump(tools), ts(at)),
        )
        kept = await self.prefix(agent)
        return kept or ConversationPrefix(system, tools)

    async def set_tools(self, agent: str, tools: list[dict[str, Any]]) -> None:
        """Declare more tools in the frozen prefix (only for a model that binds no thinking
        to it: the change costs the prompt cache, nothing else)."""
        await self.db.execute(
            "UPDATE conversation_prefixes SET tools = ? WHERE agent = ?", (_dump(tools), agent)
        )

    async def set_drop_block(self, agent: str) -> None:
        await self.db.execute(
            "UPDATE conversation_prefixes SET drop_block = 1 WHERE agent = ?", (agent,)
        )

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
