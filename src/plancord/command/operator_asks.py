"""``plancord asks list`` and ``plancord asks answer``: what the agents wait on a human for
(a permission request, a drift or network ask, a checkpoint, a question), answered from a
shell through the core's ``AskService``, the one the Discord cards report to.

The answer is judged by the same authority as a click (the operator may decide every
agent's asks; ``--as`` names who answered at the shell) and kept in the ask's row; the bot
process waiting on it reads it within a few seconds, goes on, audits the outcome with the
operator as the actor, and redraws the card as settled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plancord.command.operator import OperatorError, OperatorServices
from plancord.core.asks.choices import choices_of, labels_of, subject_of
from plancord.core.asks.records import StoredAsk
from plancord.core.asks.service import POLL_SECONDS, Answered, NotWaiting, WrongChoice
from plancord.core.authority import ACTS
from plancord.core.planning import Actor

__all__ = ["asks_answer", "asks_json", "asks_list", "asks_text"]


async def asks_list(services: OperatorServices, agent: str | None) -> list[StoredAsk]:
    """The asks waiting for an answer (``agent``'s only, when given), oldest first."""
    if agent is not None:
        await services.store.get_agent(agent)  # an unknown agent is an error, not "none"
    return await services.asks.pending(agent)


def _takes(ask: StoredAsk) -> str:
    """What ``plancord asks answer`` takes for ``ask``."""
    if ask.kind == "question":
        choices = choices_of(ask.payload)
        numbered = ", ".join(f"{n}={c}" for n, c in enumerate(choices, start=1))
        return f"an answer in words{f' or a choice ({numbered})' if choices else ''}"
    return "|".join(act.value for act in ACTS[subject_of(ask.payload)])


def _what(ask: StoredAsk) -> str:
    if ask.kind == "question":
        return str(ask.payload.get("text", ""))
    return f"{ask.payload.get('tool_name', 'a tool')}: {ask.payload.get('action', '')}"


def _subject(ask: StoredAsk) -> str:
    return "question" if ask.kind == "question" else subject_of(ask.payload).value


def asks_text(asks: Sequence[StoredAsk]) -> str:
    if not asks:
        return "no asks are waiting"
    lines = []
    for ask in asks:
        until = ask.deadline.strftime("%Y-%m-%d %H:%M:%S UTC")
        what = " ".join(_what(ask).split())[:100]
        lines.append(f"{ask.id}  {ask.agent}  {_subject(ask)}  until {until}  {what}")
        lines.append(f"    answer: plancord asks answer {ask.id} {_takes(ask)}")
    return "\n".join(lines)


def asks_json(asks: Sequence[StoredAsk]) -> list[dict[str, Any]]:
    return [
        {
            "id": ask.id,
            "agent": ask.agent,
            "kind": ask.kind,
            "subject": _subject(ask),
            "what": _what(ask),
            "labels": list(labels_of(ask.payload)) if ask.kind == "permission" else None,
            "choices": list(choices_of(ask.payload)) if ask.kind == "question" else None,
            "created_at": ask.created_at.isoformat(),
            "deadline": ask.deadline.isoformat(),
        }
        for ask in asks
    ]


async def asks_answer(
    services: OperatorServices, ask_id: str, choice: str, name: str | None
) -> str:
    """Answer ``ask_id`` with ``choice`` as the operator (named ``name``)."""
    actor = Actor.operator(name) if name else Actor.operator()
    result = await services.asks.answer(ask_id, actor, choice)
    if isinstance(result, NotWaiting):
        ended = f" (it ended: {result.outcome})" if result.outcome else ""
        raise OperatorError(
            f"no ask {ask_id} waits for an answer{ended}; plancord asks list shows those that do"
        )
    if isinstance(result, WrongChoice):
        raise OperatorError(f"{result.text}; nothing was answered")
    if not isinstance(result, Answered):
        raise OperatorError(f"{result.text}; nothing was answered")
    ask = result.ask
    return (
        f"answered ask {ask.id} of agent {ask.agent}: {result.outcome}; audited as operator\n"
        f"note: the waiting bot reads the answer within {POLL_SECONDS:g} seconds and goes on"
    )
