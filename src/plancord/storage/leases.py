"""Leases of processes over the shared store, and the holds of git they take
(``agent.execution.lease``).

Why this exists apart from the intents' stores: a lease is the one answer to "is that
process still carrying this out?" for every kind of intent and for git's lock files, on
every host. Its expiry is read and written by the database's own clock (``_NOW``), never a
host's, so two hosts whose clocks differ still agree on whether a lease has expired. A lease
is renewed only while it has not expired: once it lapsed it stays lapsed, and its process
takes a new one under a new owner id.
"""

from __future__ import annotations

from plancord.storage.backend import Backend, Tx

_NOW = {
    "sqlite": "((julianday('now') - 2440587.5) * 86400.0)",
    "postgresql": "(extract(epoch from clock_timestamp())::double precision)",
}


def now_sql(dialect: str) -> str:
    """The database's clock in seconds since the epoch, as an SQL expression."""
    return _NOW[dialect]


def live_lease_sql(dialect: str, owner_column: str) -> str:
    """An SQL condition: ``owner_column`` names a lease that has not expired."""
    return (
        f"EXISTS (SELECT 1 FROM leases WHERE leases.owner = {owner_column} "  # noqa: S608 - the database's clock, a constant
        f"AND leases.expires_at > {now_sql(dialect)})"
    )


class LeaseStore:
    """Reads and writes ``leases`` and ``git_holds``."""

    def __init__(self, db: Backend) -> None:
        self.db = db
        self._now = now_sql(db.dialect)

    async def take(self, owner: str, host: str, pid: int, seconds: float) -> None:
        """A new lease ``owner`` for ``seconds`` from the database's now."""
        await self.db.execute(
            "INSERT INTO leases (owner, host, pid, taken_at, expires_at) "  # noqa: S608 - the database's clock, a constant
            f"VALUES (?, ?, ?, {self._now}, {self._now} + ?)",
            (owner, host, pid, seconds),
        )

    async def renew(self, owner: str, seconds: float) -> bool:
        """Extend ``owner``'s lease to ``seconds`` from now; False when it had expired (or
        is gone): it is never renewed again."""
        changed = await self.db.execute(
            f"UPDATE leases SET expires_at = {self._now} + ? "  # noqa: S608 - the database's clock, a constant
            f"WHERE owner = ? AND expires_at > {self._now}",
            (seconds, owner),
        )
        return changed == 1

    async def release(self, owner: str) -> None:
        """The process ends: its lease and its holds of git are gone at once."""

        def work(conn: Tx) -> None:
            conn.execute("DELETE FROM git_holds WHERE owner = ?", (owner,))
            conn.execute("DELETE FROM leases WHERE owner = ?", (owner,))

        await self.db.write(work)

    async def live(self) -> dict[str, str]:
        """Every lease that has not expired: its owner and where it runs (``host pid``)."""
        rows = await self.db.fetchall(
            f"SELECT owner, host, pid FROM leases WHERE expires_at > {self._now}"  # noqa: S608 - the database's clock, a constant
        )
        return {str(row["owner"]): f"{row['host']} pid {row['pid']}" for row in rows}

    async def hold(self, agent: str, owner: str) -> None:
        """``owner`` runs git in ``agent``'s workspace from now on."""
        await self.db.execute(
            f"INSERT INTO git_holds (agent, owner, since) VALUES (?, ?, {self._now}) "  # noqa: S608 - the database's clock, a constant
            "ON CONFLICT (agent, owner) DO NOTHING",
            (agent, owner),
        )

    async def unhold(self, agent: str, owner: str) -> None:
        await self.db.execute("DELETE FROM git_holds WHERE agent = ? AND owner = ?", (agent, owner))

    async def holders(self, agent: str) -> dict[str, str]:
        """The owners whose lease is live and who hold git in ``agent``'s workspace, with
        where they run."""
        rows = await self.db.fetchall(
            "SELECT leases.owner, leases.host, leases.pid FROM git_holds JOIN leases "  # noqa: S608
            "ON leases.owner = git_holds.owner WHERE git_holds.agent = ? "
            f"AND leases.expires_at > {self._now}",
            (agent,),
        )
        return {str(row["owner"]): f"{row['host']} pid {row['pid']}" for row in rows}
