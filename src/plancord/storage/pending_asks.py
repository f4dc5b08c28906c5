"""The ``pending_asks`` table: what an agent waits on a human for (a question, or a
permission request with Allow / Deny buttons), so that a restart can mark it expired
instead of leaving live buttons nobody listens to, and another process (the operator's
shell) can answer it: the answer is kept in the row for the waiting process to read."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from plancord.core.asks.records import AskKind, StoredAsk
from plancord.core.changes import ChangeKind
from plancord.storage.backend import Backend, Tx
from plancord.storage.changes import append_change
from plancord.storage.codec import ts

__all__ = ["AskKind", "PendingAskStore", "StoredAsk"]


class PendingAskStore:
    """The ``pending_asks`` table (``core.asks.records.AskRows``)."""

    def __init__(self, db: Backend) -> None:
        self.db = db

    async def add(self, ask: StoredAsk) -> None:
        values = (
            ask.id,
            ask.agent,
            ask.kind,
            json.dumps(ask.payload, ensure_ascii=False),
            ts(ask.created_at),
            ts(ask.deadline),
            ask.channel_id,
            ask.message_id,
        )
        await self.db.execute(
            "INSERT INTO pending_asks (id, agent, kind, payload, created_at, deadline, "
            "channel_id, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )

    async def set_message(self, ask_id: str, channel_id: int, message_id: int) -> None:
        await self.db.execute(
            "UPDATE pending_asks SET channel_id = ?, message_id = ? WHERE id = ?",
            (channel_id, message_id, ask_id),
        )

    async def set_answer(self, ask_id: str, answer: dict[str, Any]) -> bool:
        """Keep ``answer`` unless the ask has one or is gone; True when this one was kept. The
        change feed says so in the same transaction, so the process waiting on the ask
        hears it at once (``storage.changes``)."""
        keep = "UPDATE pending_asks SET answer = ? WHERE id = ? AND answer IS NULL"
        values = (json.dumps(answer, ensure_ascii=False), ask_id)
        return await self._changed(ask_id, "answered", keep, values)

    async def delete(self, ask_id: str) -> None:
        """The ask was settled (answered, expired, or its turn ended): its row goes, and the
        change feed says so in the same transaction (``storage.changes``)."""
        await self._changed(ask_id, "settled", "DELETE FROM pending_asks WHERE id = ?", (ask_id,))

    async def _changed(self, ask_id: str, what: str, sql: str, values: tuple[Any, ...]) -> bool:
        """Run ``sql`` on the ask's row and, when it changed the row, append the ask's change
        (``what``) in the same transaction; True when it did."""
        origin = self.db.origin

        def work(conn: Tx) -> bool:
            row = conn.execute("SELECT agent FROM pending_asks WHERE id = ?", (ask_id,)).fetchone()
            if row is None or conn.execute(sql, values).rowcount != 1:
                return False
            payload = {"what": what}
            append_change(
                conn, origin, ChangeKind.ASK, str(row[0]), ask_id, payload, datetime.now(UTC)
            )
            return True

        return await self.db.write(work)

    async def get(self, ask_id: str) -> StoredAsk | None:
        row = await self.db.fetchone("SELECT * FROM pending_asks WHERE id = ?", (ask_id,))
        return None if row is None else _ask(row)

    async def all(self) -> list[StoredAsk]:
        rows = await self.db.fetchall("SELECT * FROM pending_asks ORDER BY created_at, id")
        return [_ask(row) for row in rows]


def _ask(row: Any) -> StoredAsk:
    answer = row["answer"]
    return StoredAsk(
        id=row["id"],
        agent=row["agent"],
        kind=row["kind"],
        payload=json.loads(row["payload"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        deadline=datetime.fromisoformat(row["deadline"]),
        channel_id=row["channel_id"],
        message_id=row["message_id"],
        answer=json.loads(answer) if answer is not None else None,
    )
