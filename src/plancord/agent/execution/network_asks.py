"""The cards that ask a human about hosts the plan does not name: one card per command.

Why this exists: under ``drift: ask`` a connection to a host the current step does not
name waits for a human's Allow for this plan / Deny. A single command can name many hosts
at once (a package manager's mirrors, a build's downloads), and a card per host, posted
again after every Deny, buries the channel. So the hosts asked about gather into one
round: the first connection opens it, the hosts that arrive within
:data:`GATHER_SECONDS` (or while an earlier card of the execution waits) join it, and it
is posted as one card listing them all, up to :data:`MAX_HOSTS_PER_CARD`. One card of an
execution is shown at a time, and at most :data:`MAX_ROUNDS_WAITING` rounds wait in all
(the card shown and the one gathering behind it): a host past either bound is refused at
once, with the reason. A host a card did not allow (Deny, no answer in time, a card not
shown) is refused without asking again for the rest of the command that asked
(:class:`NetworkCalls` counts the execution's calls); the next command may ask again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from plancord.core.authority import Answer
from plancord.core.execution import ExecutionRecord

GATHER_SECONDS = 1.0
MAX_HOSTS_PER_CARD = 16
MAX_ROUNDS_WAITING = 2


class NetworkCalls:
    """How many calls each running plan has started: the host counts each one as it
    begins (``ExecutionHost.before``), so a connection knows which command it belongs to."""

    def __init__(self) -> None:
        self._started: dict[str, int] = {}

    def started(self, plan_id: str) -> None:
        self._started[plan_id] = self._started.get(plan_id, 0) + 1

    def current(self, plan_id: str) -> int:
        return self._started.get(plan_id, 0)

    def forget(self, plan_id: str) -> None:
        self._started.pop(plan_id, None)


Post = Callable[[ExecutionRecord, tuple[str, ...]], Awaitable[Answer]]
"""``post(record, hosts)``: show one card asking about ``hosts`` and record its answer."""


@dataclass
class _Round:
    """Hosts asked about together, on one card."""

    call: int
    answer: asyncio.Future[bool]
    hosts: list[str] = field(default_factory=list)
    posted: bool = False


@dataclass(frozen=True, slots=True)
class Refused:
    """A host refused without a card, and why (told to the program)."""

    reason: str


class NetworkAsks:
    """The rounds of asks per plan, and the hosts each command was refused."""

    def __init__(self, post: Post, calls: NetworkCalls) -> None:
        self._post = post
        self._calls = calls
        self._rounds: dict[str, list[_Round]] = {}
        self._refused: dict[str, tuple[int, set[str]]] = {}
        """Per plan: the call, and the hosts a card of it did not allow."""
        self._tasks: set[asyncio.Task[None]] = set()

    async def ask(self, record: ExecutionRecord, host: str) -> bool | Refused:
        """Whether a human allowed ``host`` (with the hosts asked about alongside), or why
        it is refused without asking."""
        plan = record.plan_id
        call = self._calls.current(plan)
        done = self._refused.get(plan)
        if done is not None and done[0] == call and host in done[1]:
            return Refused(f"{host} was not allowed for this command; refused without asking")
        rounds = self._rounds.setdefault(plan, [])
        for round_ in rounds:
            if host in round_.hosts:
                return await asyncio.shield(round_.answer)
        gathering = next((r for r in rounds if not r.posted), None)
        if gathering is None:
            if len(rounds) >= MAX_ROUNDS_WAITING:
                return Refused(
                    f"{len(rounds)} network cards of this execution already wait for an "
                    f"answer; {host} refused without asking"
                )
            gathering = _Round(call, asyncio.get_running_loop().create_future())
            rounds.append(gathering)
            task = asyncio.create_task(self._run(record, gathering, rounds[:-1]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if len(gathering.hosts) >= MAX_HOSTS_PER_CARD:
            return Refused(
                f"{MAX_HOSTS_PER_CARD} hosts already wait on one card; {host} refused "
                "without asking"
            )
        gathering.hosts.append(host)
        return await asyncio.shield(gathering.answer)

    def forget(self, plan_id: str) -> None:
        """The plan ended: its refusals go (its rounds end with their cards)."""
        self._refused.pop(plan_id, None)

    async def _run(self, record: ExecutionRecord, round_: _Round, earlier: list[_Round]) -> None:
        """Wait for the execution's earlier cards, gather a moment, post one card."""
        plan = record.plan_id
        allowed = False
        try:
            for before in earlier:
                await asyncio.shield(before.answer)
            await asyncio.sleep(GATHER_SECONDS)
            round_.posted = True
            answer = await self._post(record, tuple(round_.hosts))
            allowed = answer is Answer.ALLOWED
            if not allowed:
                done = self._refused.get(plan)
                if done is None or done[0] != round_.call:
                    done = (round_.call, set())
                    self._refused[plan] = done
                done[1].update(round_.hosts)
        finally:
            if not round_.answer.done():
                round_.answer.set_result(allowed)
            rounds = self._rounds.get(plan, [])
            if round_ in rounds:
                rounds.remove(round_)
            if not rounds:
                self._rounds.pop(plan, None)
